/**
 * V-PCC reconstruction in a vertex shader: one vertex per atlas pixel and map; the shader looks up
 * the pixel's patch (block-to-patch texture), drops it when unoccupied, turns (pixel, depth) into
 * a 3D position with the patch's projection and orientation, and its colour into RGB with the same
 * 4:2:0 → 4:4:4 filter and BT.709 conversion as the CPU path (wasm/src/decoder/color.cpp). The decoder
 * worker then does no per-point work at all, and the main thread uploads pictures (≈ 1.5 bytes per
 * atlas pixel per map) instead of point arrays — the approach of real-time mobile V-PCC players.
 *
 * What it reproduces exactly: the reconstruction of wasm/src/decoder/reconstruct.cpp without
 * post-processing (occupancy with the lossy threshold, block-to-patch, all eight orientations,
 * level of detail, 45° planes, two maps absolute or delta, duplicate removal, patch size
 * quantizer). What it cannot do — post-processing needs neighbourhoods of reconstructed points,
 * not of pixels — is listed in docs/player.md ("GPU reconstruction").
 *
 * `GlAtlasReconstructor` runs the shader with transform feedback to read the points back (tests
 * and benchmarks compare it with the CPU path); the renderer uses the same GLSL in its material.
 */
import type { AtlasFrame, AtlasPlane } from '../model/frames';

/** Texels per patch in the patch texture (RGBA32I): the 20 int32 of vpcc::PatchRecord. */
const PATCH_TEXELS = 5;

/**
 * The reconstruction function and its uniforms, GLSL ES 3.00. `reconstructPoint(id, point, rgb)`
 * returns false for a vertex that is no point (unoccupied pixel, no patch, duplicate).
 */
export const RECONSTRUCT_GLSL = /* glsl */ `
precision highp usampler2D;
precision highp isampler2D;
uniform usampler2D uOccupancy;
uniform usampler2D uBlockToPatch;
uniform isampler2D uPatches;
uniform usampler2D uGeometry0;
uniform usampler2D uGeometry1;
uniform usampler2D uAttrY0;
uniform usampler2D uAttrU0;
uniform usampler2D uAttrV0;
uniform usampler2D uAttrY1;
uniform usampler2D uAttrU1;
uniform usampler2D uAttrV1;
uniform ivec2 uAtlasSize;
uniform int uBlockSize;
uniform int uPrecision;
uniform int uThreshold;
uniform int uAbsoluteD1;
uniform int uRemoveDuplicates;
uniform int uSizeQuantizer;
uniform int uBitDepth3d;
uniform int uHasAttribute;
uniform int uChroma444;
uniform float uAttributeScale;   // 255 for 8-bit pictures, else 1023 (as TMC2 normalises)
uniform float uAttributeOffset;  // 128 or 512

int geometrySample(int map, ivec2 p) {
  return int(map == 0 ? texelFetch(uGeometry0, p, 0).r : texelFetch(uGeometry1, p, 0).r);
}

uint attributeSample(int map, int plane, ivec2 p) {
  if (map == 0) return plane == 0 ? texelFetch(uAttrY0, p, 0).r : plane == 1 ? texelFetch(uAttrU0, p, 0).r : texelFetch(uAttrV0, p, 0).r;
  return plane == 0 ? texelFetch(uAttrY1, p, 0).r : plane == 1 ? texelFetch(uAttrU1, p, 0).r : texelFetch(uAttrV1, p, 0).r;
}

float chromaValue(uint s) {
  return clamp((float(s) - uAttributeOffset) / uAttributeScale, -0.5, 0.5);
}

// 4:2:0 chroma at full-resolution pixel p: separable 4-tap filters, vertical then horizontal.
float chromaVertical(int map, int plane, int column, int y, ivec2 size) {
  int i = y >> 1;
  bool odd = (y & 1) == 1;
  int first = odd ? i - 1 : i - 2;
  vec4 taps = odd ? vec4(-16.0, 216.0, 64.0, -8.0) : vec4(-8.0, 64.0, 216.0, -16.0);
  float sum = 0.0;
  for (int k = 0; k < 4; k++) {
    int row = clamp(first + k, 0, size.y - 1);
    sum += taps[k] * chromaValue(attributeSample(map, plane, ivec2(column, row)));
  }
  return sum / 256.0;
}

float chroma420(int map, int plane, ivec2 p, ivec2 size) {
  int j = p.x >> 1;
  if ((p.x & 1) == 0) return chromaVertical(map, plane, j, p.y, size);
  vec4 taps = vec4(-16.0, 144.0, 144.0, -16.0);
  float sum = 0.0;
  for (int k = 0; k < 4; k++) sum += taps[k] * chromaVertical(map, plane, clamp(j - 1 + k, 0, size.x - 1), p.y, size);
  return sum / 256.0;
}

float roundClipped(float v, float hi) {
  return v <= 0.0 ? 0.0 : v >= hi ? hi : floor(v + 0.5);
}

vec3 attributeRgb(int map, ivec2 p) {
  float luma = clamp(float(attributeSample(map, 0, p)) / uAttributeScale, 0.0, 1.0);
  float cb, cr;
  if (uChroma444 != 0) {
    cb = chromaValue(attributeSample(map, 1, p));
    cr = chromaValue(attributeSample(map, 2, p));
  } else {
    ivec2 size = map == 0 ? textureSize(uAttrU0, 0) : textureSize(uAttrU1, 0);
    cb = chroma420(map, 1, p, size);
    cr = chroma420(map, 2, p, size);
  }
  // Through 16-bit Y'CbCr, as the reference decoder, then BT.709 to 8-bit R'G'B'.
  float y = roundClipped(65535.0 * luma, 65535.0) / 65535.0;
  float u = clamp((roundClipped(65535.0 * cb + 32768.0, 65535.0) - 32768.0) / 65535.0, -0.5, 0.5);
  float v = clamp((roundClipped(65535.0 * cr + 32768.0, 65535.0) - 32768.0) / 65535.0, -0.5, 0.5);
  vec3 rgb = vec3(y + 1.57480 * v, y - 0.18733 * u - 0.46813 * v, y + 1.85563 * u);
  return vec3(roundClipped(rgb.r * 255.0, 255.0), roundClipped(rgb.g * 255.0, 255.0), roundClipped(rgb.b * 255.0, 255.0));
}

int depthToNormal(int depth, int d1, int projectionMode) {
  return projectionMode == 0 ? depth + d1 : max(d1 - depth, 0);
}

bool reconstructPoint(int id, out vec3 point, out vec3 rgb) {
  int pixels = uAtlasSize.x * uAtlasSize.y;
  int map = id / pixels;
  int pixel = id - map * pixels;
  ivec2 a = ivec2(pixel % uAtlasSize.x, pixel / uAtlasSize.x);
  uint entry = texelFetch(uBlockToPatch, a / uBlockSize, 0).r;
  if (entry == 0u) return false;
  if (int(texelFetch(uOccupancy, a / uPrecision, 0).r) <= uThreshold) return false;
  int patchIndex = int(entry) - 1;
  ivec4 t0 = texelFetch(uPatches, ivec2(0, patchIndex), 0);  // tileX, tileY, u0, v0
  ivec4 t1 = texelFetch(uPatches, ivec2(1, patchIndex), 0);  // sizeU0, sizeV0, u1, v1
  ivec4 t2 = texelFetch(uPatches, ivec2(2, patchIndex), 0);  // d1, sizeD, normalAxis, tangentAxis
  ivec4 t3 = texelFetch(uPatches, ivec2(3, patchIndex), 0);  // bitangentAxis, projectionMode, orientation, 45° axis
  ivec4 t4 = texelFetch(uPatches, ivec2(4, patchIndex), 0);  // lodX, lodY, sizeXPixels, sizeYPixels
  int w = t1.x * uBlockSize, h = t1.y * uBlockSize;
  int x = a.x - t0.x - t0.z * uBlockSize, y = a.y - t0.y - t0.w * uBlockSize;
  // Canvas position back to patch (u, v): the inverse of each orientation of patchToCanvas.
  int u = x, v = y;
  switch (t3.z) {
    case 1: u = y; v = x; break;                  // swap
    case 2: u = w - 1 - x; v = h - 1 - y; break;  // rotate 180
    case 3: u = w - 1 - x; v = y; break;          // mirror
    case 4: u = x; v = h - 1 - y; break;          // mirror + rotate 180
    case 5: u = w - 1 - y; v = x; break;          // rotate 270
    case 6: u = w - 1 - y; v = h - 1 - x; break;  // mirror + rotate 90
    case 7: u = y; v = h - 1 - x; break;          // rotate 90
  }
  if (uSizeQuantizer != 0 && (u >= t4.z || v >= t4.w)) return false;
  int normal0 = depthToNormal(geometrySample(0, a), t2.x, t3.y);
  int normal = normal0;
  if (map == 1) {
    int depth1 = geometrySample(1, a);
    normal = uAbsoluteD1 != 0 ? depthToNormal(depth1, t2.x, t3.y) : normal0 + (t3.y == 0 ? depth1 : -depth1);
    if (uRemoveDuplicates != 0 && normal == normal0) return false;
  }
  ivec3 p;
  p[t2.w] = u * t4.x + t1.z;
  p[t3.x] = v * t4.y + t1.w;
  p[t2.z] = normal;
  if (t3.w != 0) {
    // 45° plane back to the axis-aligned frame (truncating like the reference's int cast).
    float s = float((1 << (uBitDepth3d - 1)) - 1);
    vec3 q = vec3(p);
    if (t3.w == 1) q = vec3((q.x - q.z + s) / 2.0, q.y, (q.x + q.z - s) / 2.0);
    else if (t3.w == 2) q = vec3(q.x, (q.z + q.y - s) / 2.0, (q.z - q.y + s) / 2.0);
    else if (t3.w == 3) q = vec3((q.y + q.x - s) / 2.0, (q.y - q.x + s) / 2.0, q.z);
    p = ivec3(q);
  }
  point = vec3(p);
  rgb = uHasAttribute != 0 ? attributeRgb(map, a) : vec3(127.0);
  return true;
}
`;

/** Vertices to draw for a frame: one per atlas pixel and map. */
export function atlasVertexCount(frame: AtlasFrame): number {
  return frame.params.atlasWidth * frame.params.atlasHeight * frame.params.mapCount;
}

/** Integer uniforms of a frame, by name (the textures are bound separately). */
export function atlasUniforms(frame: AtlasFrame): Record<string, number | [number, number]> {
  const p = frame.params;
  const eightBit = (frame.attribute[0]?.bitDepth ?? 8) === 8;
  const chroma444 = frame.attribute[0] ? frame.attribute[0].u.width === frame.attribute[0].y.width : true;
  return {
    uAtlasSize: [p.atlasWidth, p.atlasHeight],
    uBlockSize: p.blockSize,
    uPrecision: Math.max(1, Math.round(p.atlasWidth / frame.occupancy.width)),
    uThreshold: p.lossyThreshold,
    uAbsoluteD1: p.absoluteD1 ? 1 : 0,
    uRemoveDuplicates: p.removeDuplicates ? 1 : 0,
    uSizeQuantizer: p.sizeQuantizer ? 1 : 0,
    uBitDepth3d: p.bitDepth3d,
    uHasAttribute: p.hasAttribute && frame.attribute.length > 0 ? 1 : 0,
    uChroma444: chroma444 ? 1 : 0,
    uAttributeScale: eightBit ? 255 : 1023,
    uAttributeOffset: eightBit ? 128 : 512,
  };
}

/** The integer textures of a frame, by sampler name, as (width, height, format, data). */
export interface AtlasTextureData {
  width: number;
  height: number;
  kind: 'u8' | 'u16' | 'u32' | 'i32x4';
  data: Uint8Array | Uint16Array | Uint32Array | Int32Array;
}

export function atlasTextures(frame: AtlasFrame): Record<string, AtlasTextureData> {
  const plane = (p: AtlasPlane): AtlasTextureData => ({ width: p.width, height: p.height, kind: p.samples instanceof Uint8Array ? 'u8' : 'u16', data: p.samples });
  const patchCount = frame.patches.length / 20;
  const out: Record<string, AtlasTextureData> = {
    uOccupancy: plane(frame.occupancy),
    uBlockToPatch: { width: frame.blocksWide, height: frame.blockToPatch.length / frame.blocksWide, kind: 'u32', data: frame.blockToPatch },
    // At least one row, so the texture is valid for a frame without patches.
    uPatches: { width: PATCH_TEXELS, height: Math.max(1, patchCount), kind: 'i32x4', data: patchCount ? frame.patches : new Int32Array(20) },
  };
  for (let m = 0; m < 2; m++) {
    // Map 1 falls back to map 0's pictures when there is one map (never read, but must be bound).
    const g = frame.geometry[Math.min(m, frame.geometry.length - 1)];
    out[`uGeometry${m}`] = plane(g);
    const a = frame.attribute[Math.min(m, frame.attribute.length - 1)];
    const empty = { width: 1, height: 1, samples: new Uint8Array(1) };
    out[`uAttrY${m}`] = plane(a?.y ?? empty);
    out[`uAttrU${m}`] = plane(a?.u ?? empty);
    out[`uAttrV${m}`] = plane(a?.v ?? empty);
  }
  return out;
}

const FEEDBACK_VERTEX = /* glsl */ `#version 300 es
precision highp float;
precision highp int;
${RECONSTRUCT_GLSL}
flat out ivec4 vPoint;  // x, y, z, valid
flat out ivec4 vColor;  // r, g, b, 0
void main() {
  vec3 position, rgb;
  bool valid = reconstructPoint(gl_VertexID, position, rgb);
  vPoint = ivec4(ivec3(position), valid ? 1 : 0);
  vColor = ivec4(ivec3(rgb), 0);
  gl_Position = vec4(0.0);
}
`;

const FEEDBACK_FRAGMENT = /* glsl */ `#version 300 es
precision highp float;
out vec4 color;
void main() { color = vec4(0.0); }
`;

/** Points read back from the GPU, in vertex order (map, row, column). */
export interface ReadBackPoints {
  count: number;
  positions: Int32Array;
  colors: Uint8Array;
}

/**
 * Runs the reconstruction shader on raw WebGL2 with transform feedback and reads the points back:
 * the reference check of the GPU path against the CPU path, and its benchmark.
 */
export class GlAtlasReconstructor {
  private readonly program: WebGLProgram;
  private readonly textures = new Map<string, WebGLTexture>();

  constructor(private readonly gl: WebGL2RenderingContext) {
    const compile = (type: number, source: string) => {
      const shader = gl.createShader(type)!;
      gl.shaderSource(shader, source);
      gl.compileShader(shader);
      if (!gl.getShaderParameter(shader, gl.COMPILE_STATUS)) throw new Error(`reconstruction shader: ${gl.getShaderInfoLog(shader)}`);
      return shader;
    };
    const program = gl.createProgram()!;
    gl.attachShader(program, compile(gl.VERTEX_SHADER, FEEDBACK_VERTEX));
    gl.attachShader(program, compile(gl.FRAGMENT_SHADER, FEEDBACK_FRAGMENT));
    gl.transformFeedbackVaryings(program, ['vPoint', 'vColor'], gl.INTERLEAVED_ATTRIBS);
    gl.linkProgram(program);
    if (!gl.getProgramParameter(program, gl.LINK_STATUS)) throw new Error(`reconstruction program: ${gl.getProgramInfoLog(program)}`);
    this.program = program;
  }

  /** Uploads the frame's pictures and atlas, runs the shader once per vertex, returns the points. */
  reconstruct(frame: AtlasFrame): ReadBackPoints {
    const gl = this.gl;
    gl.useProgram(this.program);
    let unit = 0;
    for (const [name, t] of Object.entries(atlasTextures(frame))) {
      const texture = this.textures.get(name) ?? gl.createTexture()!;
      this.textures.set(name, texture);
      gl.activeTexture(gl.TEXTURE0 + unit);
      gl.bindTexture(gl.TEXTURE_2D, texture);
      gl.pixelStorei(gl.UNPACK_ALIGNMENT, 1);
      if (t.kind === 'u8') gl.texImage2D(gl.TEXTURE_2D, 0, gl.R8UI, t.width, t.height, 0, gl.RED_INTEGER, gl.UNSIGNED_BYTE, t.data);
      else if (t.kind === 'u16') gl.texImage2D(gl.TEXTURE_2D, 0, gl.R16UI, t.width, t.height, 0, gl.RED_INTEGER, gl.UNSIGNED_SHORT, t.data);
      else if (t.kind === 'u32') gl.texImage2D(gl.TEXTURE_2D, 0, gl.R32UI, t.width, t.height, 0, gl.RED_INTEGER, gl.UNSIGNED_INT, t.data);
      else gl.texImage2D(gl.TEXTURE_2D, 0, gl.RGBA32I, t.width, t.height, 0, gl.RGBA_INTEGER, gl.INT, t.data);
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.NEAREST);
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAG_FILTER, gl.NEAREST);
      gl.uniform1i(gl.getUniformLocation(this.program, name), unit++);
    }
    for (const [name, value] of Object.entries(atlasUniforms(frame))) {
      const at = gl.getUniformLocation(this.program, name);
      if (Array.isArray(value)) gl.uniform2i(at, value[0], value[1]);
      else if (name === 'uAttributeScale' || name === 'uAttributeOffset') gl.uniform1f(at, value);
      else gl.uniform1i(at, value);
    }
    const vertices = atlasVertexCount(frame);
    const bytes = vertices * 8 * 4;
    const buffer = gl.createBuffer()!;
    gl.bindBuffer(gl.TRANSFORM_FEEDBACK_BUFFER, buffer);
    gl.bufferData(gl.TRANSFORM_FEEDBACK_BUFFER, bytes, gl.STREAM_READ);
    const feedback = gl.createTransformFeedback()!;
    gl.bindTransformFeedback(gl.TRANSFORM_FEEDBACK, feedback);
    gl.bindBufferBase(gl.TRANSFORM_FEEDBACK_BUFFER, 0, buffer);
    gl.enable(gl.RASTERIZER_DISCARD);
    gl.beginTransformFeedback(gl.POINTS);
    gl.drawArrays(gl.POINTS, 0, vertices);
    gl.endTransformFeedback();
    gl.disable(gl.RASTERIZER_DISCARD);
    gl.bindTransformFeedback(gl.TRANSFORM_FEEDBACK, null);
    const out = new Int32Array(vertices * 8);
    gl.getBufferSubData(gl.TRANSFORM_FEEDBACK_BUFFER, 0, out);
    gl.bindBuffer(gl.TRANSFORM_FEEDBACK_BUFFER, null);
    gl.deleteTransformFeedback(feedback);
    gl.deleteBuffer(buffer);
    let count = 0;
    for (let i = 0; i < vertices; i++) count += out[i * 8 + 3];
    const positions = new Int32Array(count * 3);
    const colors = new Uint8Array(count * 3);
    let n = 0;
    for (let i = 0; i < vertices; i++) {
      if (!out[i * 8 + 3]) continue;
      for (let c = 0; c < 3; c++) {
        positions[n * 3 + c] = out[i * 8 + c];
        colors[n * 3 + c] = out[i * 8 + 4 + c];
      }
      n++;
    }
    return { count, positions, colors };
  }

  dispose(): void {
    for (const t of this.textures.values()) this.gl.deleteTexture(t);
    this.textures.clear();
    this.gl.deleteProgram(this.program);
  }
}
