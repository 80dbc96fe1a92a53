/**
 * The three.js side of GPU reconstruction (atlasReconstruction.ts): a points material whose
 * vertex shader reconstructs each atlas pixel into a point, and the integer textures that feed
 * it. The material shares the size and splat uniforms of the object's CPU-path material, so both
 * paths draw identically and a viewport change reaches both.
 *
 * Textures are allocated once per size and updated in place (texSubImage2D) for every new frame;
 * a different size (another quality's atlas) replaces them.
 */
import * as THREE from 'three';
import type { AtlasFrame } from '../model/frames';
import { type AtlasTextureData, atlasTextures, atlasUniforms, RECONSTRUCT_GLSL } from './atlasReconstruction';
import { POINT_FRAGMENT } from './pointMaterial';

const VERTEX = /* glsl */ `
${RECONSTRUCT_GLSL}
uniform float pointSize;
uniform float viewportHeight;
uniform float maxPointSize;
out vec3 vColor;
void main() {
  vec3 point, rgb;
  if (!reconstructPoint(gl_VertexID, point, rgb)) {
    // No point here: outside the clip volume, so nothing is rasterised.
    gl_Position = vec4(2.0, 2.0, 2.0, 1.0);
    gl_PointSize = 0.0;
    vColor = vec3(0.0);
    return;
  }
  gl_Position = projectionMatrix * (modelViewMatrix * vec4(point, 1.0));
  float pixels = pointSize * projectionMatrix[1][1] * 0.5 * viewportHeight / max(gl_Position.w, 1e-4);
  gl_PointSize = clamp(pixels, 1.0, maxPointSize);
  vColor = rgb / 255.0;
}
`;

const TEXTURE_UNIFORMS = [
  'uOccupancy', 'uBlockToPatch', 'uPatches', 'uGeometry0', 'uGeometry1', 'uAttrY0', 'uAttrU0', 'uAttrV0', 'uAttrY1', 'uAttrU1', 'uAttrV1',
];
const VALUE_UNIFORMS = [
  'uAtlasSize', 'uBlockSize', 'uPrecision', 'uThreshold', 'uAbsoluteD1', 'uRemoveDuplicates', 'uSizeQuantizer', 'uBitDepth3d',
  'uHasAttribute', 'uChroma444', 'uAttributeScale', 'uAttributeOffset',
];

function formatOf(kind: AtlasTextureData['kind']): { format: THREE.PixelFormat; type: THREE.TextureDataType; internal: THREE.PixelFormatGPU } {
  if (kind === 'u8') return { format: THREE.RedIntegerFormat, type: THREE.UnsignedByteType, internal: 'R8UI' };
  if (kind === 'u16') return { format: THREE.RedIntegerFormat, type: THREE.UnsignedShortType, internal: 'R16UI' };
  if (kind === 'u32') return { format: THREE.RedIntegerFormat, type: THREE.UnsignedIntType, internal: 'R32UI' };
  return { format: THREE.RGBAIntegerFormat, type: THREE.IntType, internal: 'RGBA32I' };
}

/** A points material reconstructing `AtlasFrame`s, sharing `base`'s size and splat uniforms. */
export class AtlasPointMaterial {
  readonly material: THREE.ShaderMaterial;
  private readonly textures = new Map<string, THREE.DataTexture>();
  /** Texture (re)allocations, for tests and stats. */
  allocations = 0;

  constructor(base: THREE.ShaderMaterial) {
    const shared = base.uniforms;
    this.material = new THREE.ShaderMaterial({
      glslVersion: THREE.GLSL3,
      vertexShader: VERTEX,
      fragmentShader: POINT_FRAGMENT,
      uniforms: {
        pointSize: shared.pointSize, viewportHeight: shared.viewportHeight, maxPointSize: shared.maxPointSize, splat: shared.splat,
        // three caches the uniform objects at the first draw: they are created here once, and
        // only their values change per frame.
        ...Object.fromEntries(TEXTURE_UNIFORMS.map((name) => [name, { value: null }])),
        ...Object.fromEntries(VALUE_UNIFORMS.map((name) => [name, { value: 0 }])),
      },
    });
  }

  /** Points the material's textures and uniforms at `frame`. */
  setFrame(frame: AtlasFrame): void {
    const uniform = (name: string) => {
      const u = this.material.uniforms[name];
      if (!u) throw new Error(`atlas material: no uniform ${name}`);
      return u;
    };
    for (const [name, data] of Object.entries(atlasTextures(frame))) {
      let texture = this.textures.get(name);
      if (!texture || texture.image.width !== data.width || texture.image.height !== data.height || texture.userData.kind !== data.kind) {
        texture?.dispose();
        const { format, type, internal } = formatOf(data.kind);
        texture = new THREE.DataTexture(data.data, data.width, data.height, format, type);
        texture.internalFormat = internal;
        texture.minFilter = THREE.NearestFilter;
        texture.magFilter = THREE.NearestFilter;
        texture.generateMipmaps = false;
        texture.unpackAlignment = 1;
        texture.userData.kind = data.kind;
        this.textures.set(name, texture);
        this.allocations++;
      } else {
        texture.image.data = data.data;
      }
      texture.needsUpdate = true;
      uniform(name).value = texture;
    }
    for (const [name, value] of Object.entries(atlasUniforms(frame))) {
      uniform(name).value = Array.isArray(value) ? new Int32Array(value) : value;
    }
    this.material.uniformsNeedUpdate = true;
  }

  dispose(): void {
    for (const t of this.textures.values()) t.dispose();
    this.textures.clear();
    this.material.dispose();
  }
}
