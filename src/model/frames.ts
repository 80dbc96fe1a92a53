/**
 * Decoded frames, as the decoder hands them to the renderer: reconstructed points, or — when the
 * renderer reconstructs on the GPU (src/render/atlasReconstruction.ts) — the occupancy, geometry
 * and attribute pictures of every map with the patches and the block-to-patch map, so the worker
 * does no per-point work and the main thread uploads pictures instead of point arrays.
 */

/** vpcc::ReconstructionParams (api_session.h). */
export interface ReconstructionParams {
  atlasWidth: number;
  atlasHeight: number;
  blockSize: number;
  /** Geometry (and attribute) maps, 1 or 2. */
  mapCount: number;
  /** Map 1 holds absolute depths (else a delta to map 0). */
  absoluteD1: boolean;
  /** A map-1 point equal to its map-0 point is dropped. */
  removeDuplicates: boolean;
  /** Patches carry their exact size in pixels. */
  sizeQuantizer: boolean;
  /** An occupancy sample above it is occupied. */
  lossyThreshold: number;
  /** Geometry coordinate bit depth. */
  bitDepth3d: number;
  hasAttribute: boolean;
  /** Bits of RECONSTRUCTION_UNSUPPORTED: tools only the CPU path could ever handle. */
  unsupported: number;
  /** Bits of POST_PROCESSING: what the stream asks for that only the CPU path applies. */
  postProcessing: number;
}

/** `ReconstructionParams.unsupported` bits. */
export const RECONSTRUCTION_UNSUPPORTED = { pointLocalReconstruction: 1, pixelDeinterleaving: 2, eom: 4, rawPatches: 8 } as const;
/** `ReconstructionParams.postProcessing` bits. */
export const POST_PROCESSING = { geometrySmoothing: 1, attributeSmoothing: 2, occupancySynthesis: 4 } as const;

/**
 * One picture plane at the stream's nominal bit depth, row-major, no padding: one byte per sample
 * up to 8 bits (the usual case: half the memory and upload), else two.
 */
export interface AtlasPlane {
  width: number;
  height: number;
  samples: Uint8Array | Uint16Array;
}

export interface AtlasAttribute {
  y: AtlasPlane;
  u: AtlasPlane;
  v: AtlasPlane;
  /** Nominal bit depth (8-bit pictures are normalised by 255, deeper ones by 1023, as TMC2 does). */
  bitDepth: number;
}

export interface AtlasFrame {
  kind: 'atlas';
  params: ReconstructionParams;
  /**
   * Points the frame reconstructs to, at most: occupied pixels inside patches × maps (map-1
   * duplicates are only known on the GPU). For stats and point sizing.
   */
  maxPoints: number;
  occupancy: AtlasPlane;
  /** Per map. */
  geometry: AtlasPlane[];
  /** Per map; empty without an attribute. */
  attribute: AtlasAttribute[];
  /** 20 int32 per patch (vpcc::PatchRecord). */
  patches: Int32Array;
  /** Per packing block over the atlas: 0 or 1 + patch index. */
  blockToPatch: Uint32Array;
  blocksWide: number;
}

export const PATCH_RECORD_INTS = 20;

/**
 * One decoded point-cloud frame, as the renderer consumes it. Positions are in the object's voxel
 * units (the MPD's `hq:scale` and placement turn them into scene metres).
 */
export interface PointFrame {
  /** Number of points. */
  count: number;
  /** x, y, z per point (length 3·count). */
  positions: Int16Array;
  /** r, g, b per point, 8-bit (length 3·count). */
  colors: Uint8Array;
}

/**
 * A decoded frame: reconstructed points, or the pictures and atlas the renderer reconstructs on
 * the GPU (src/decoder/atlasFrame.ts), depending on what the decoder was asked for.
 */
export type DecodedFrame = PointFrame | AtlasFrame;

/** Points of a frame (for an atlas frame, at most this many). */
export function framePoints(frame: DecodedFrame): number {
  return 'kind' in frame ? frame.maxPoints : frame.count;
}

/** The frame as points; throws for an atlas frame (for callers that asked for points). */
export function pointsOf(frame: DecodedFrame): PointFrame {
  if ('kind' in frame) throw new Error('expected reconstructed points, got an atlas frame');
  return frame;
}

export function isAtlasFrame(frame: object): frame is AtlasFrame {
  return (frame as Partial<AtlasFrame>).kind === 'atlas';
}
