/**
 * The scene an MPD describes (docs/mpd.md), as every stage sees it: the objects, their placement
 * and bounding boxes, and their quality ladders. Parsed by src/player/mpd.ts.
 */
import type { Quat, Vec3 } from './vectors';

export interface Representation {
  /** Directory name and template `$RepresentationID$`. */
  id: string;
  /** 0 = lowest quality. */
  rank: number;
  /** Peak bits/s over the distinct segments. */
  bandwidth: number;
  /** Average bits/s (falls back to `bandwidth`). */
  avgBandwidth: number;
  pointsPerFrame: number;
  /**
   * The V3C level its segments declare (`ptl_level_idc`, 30 × the level; `hq:v3cLevelIdc`):
   * it bounds their atlas size. Undefined when the manifest declares none (older manifests).
   */
  v3cLevelIdc?: number;
}

export interface SceneObject {
  id: string;
  codecs: string;
  position: Vec3;
  rotation: Quat;
  /** Metres per voxel unit. */
  scale: number;
  /** Bounding box in scene metres over the whole loop: min then max. */
  bbox: { min: Vec3; max: Vec3 };
  /** Increasing quality. */
  representations: Representation[];
  /** Distinct segment files. */
  loopSegments: number;
  playMode: 'loop' | 'pingpong';
  startNumber: number;
  /** Template relative to the manifest's directory, with `$RepresentationID$`/`$Number…$`. */
  mediaTemplate: string;
}

export interface SceneModel {
  scene: string;
  /** Segment duration in seconds (1 in packager output). */
  segmentDuration: number;
  /** Length of one pass of the content, seconds. */
  passDuration: number;
  objects: SceneObject[];
  /**
   * WebTransport session URLs the manifest lists (absolute https), tried after the origin's
   * `/config.json` endpoints; absent or empty: none.
   */
  webtransportEndpoints?: string[];
  /**
   * Present while the scene is still being packed (a dynamic MPD, docs/mpd.md → "A growing
   * scene"): seconds after which the manifest is read again, as it may name more seconds or
   * qualities then. Absent: the manifest is final.
   */
  updatePeriodS?: number;
}
