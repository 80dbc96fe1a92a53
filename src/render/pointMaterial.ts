/**
 * The point-cloud material: one GPU point per decoded point, sized in world metres.
 *
 * Positions arrive as the decoder's Int16 voxel coordinates and colours as 8-bit RGB; WebGL turns
 * them into floats while fetching vertices, so the CPU never converts a point. The object's
 * placement (position · rotation · scale, docs/mpd.md) is the model matrix.
 *
 * Point size: a point of world size `s` at clip-space depth `w` covers
 * `s · P[1][1] · H / (2·w)` pixels, where `P` is the projection matrix and `H` the viewport height
 * in pixels. `P[1][1]` is `2n/(t−b)` for any (also asymmetric) perspective frustum and `w` is the
 * view-space distance along the axis, so the formula holds per eye in WebXR, where every view
 * has its own projection and viewport.
 */
import * as THREE from 'three';

/** How a point is filled: `square` (fastest), `round` (disc), `sphere` (disc shaded like a ball). */
export type SplatShape = 'square' | 'round' | 'sphere';

export const SPLAT_SHAPES: readonly SplatShape[] = ['square', 'round', 'sphere'];

const VERTEX = /* glsl */ `
uniform float pointSize;
uniform float viewportHeight;
uniform float maxPointSize;
in vec3 rgb;
out vec3 vColor;
void main() {
  gl_Position = projectionMatrix * (modelViewMatrix * vec4(position, 1.0));
  float pixels = pointSize * projectionMatrix[1][1] * 0.5 * viewportHeight / max(gl_Position.w, 1e-4);
  gl_PointSize = clamp(pixels, 1.0, maxPointSize);
  vColor = rgb;
}
`;

export const POINT_FRAGMENT = /* glsl */ `
uniform int splat;
in vec3 vColor;
out vec4 fragColor;
void main() {
  float shade = 1.0;
  if (splat > 0) {
    vec2 c = gl_PointCoord * 2.0 - 1.0;
    float r2 = dot(c, c);
    if (r2 > 1.0) discard;
    // A ball lit from the viewer: brighter in the middle, never black at the rim.
    if (splat == 2) shade = 0.55 + 0.45 * sqrt(1.0 - r2);
  }
  // Decoded colours are already sRGB-encoded bytes: written as they are.
  fragColor = vec4(vColor * shade, 1.0);
}
`;

export interface PointMaterialOptions {
  /** Edge length of one point in world metres. */
  pointSizeM: number;
  splat?: SplatShape;
  /** The GPU's largest point (ALIASED_POINT_SIZE_RANGE[1]); larger requests are clamped. */
  maxPointSize?: number;
}

export function createPointMaterial(options: PointMaterialOptions): THREE.ShaderMaterial {
  return new THREE.ShaderMaterial({
    glslVersion: THREE.GLSL3,
    vertexShader: VERTEX,
    fragmentShader: POINT_FRAGMENT,
    uniforms: {
      pointSize: { value: options.pointSizeM },
      viewportHeight: { value: 1 },
      maxPointSize: { value: options.maxPointSize ?? 64 },
      splat: { value: SPLAT_SHAPES.indexOf(options.splat ?? 'round') },
    },
  });
}

export function setSplat(material: THREE.ShaderMaterial, splat: SplatShape): void {
  const index = SPLAT_SHAPES.indexOf(splat);
  if (index < 0) throw new Error(`unknown splat shape "${splat}" (${SPLAT_SHAPES.join(', ')})`);
  material.uniforms.splat.value = index;
}
