/**
 * The player's view of the future: which share of the screen each object will cover when a segment
 * plays, predicted from the head poses seen so far, with nearer objects hiding farther ones.
 *
 * Usage (the Player owns one per loaded scene):
 *
 *   const viewport = createViewportModel(scene);            // scene: SceneModel from the MPD
 *   const stop = poseSource.start((pose) => viewport.observe(pose));
 *   viewport.setProjection({ fovYDeg: 60, aspect: 16 / 9 });  // on resize / XR session start
 *   rankObjects(ids, viewport, playoutTimeMs);               // src/player/ranking.ts
 *
 * Time bases. `visibleArea(id, timeMs)` takes the player's session clock in ms (performance.now()
 * based); poses carry their source's own clock `t` in seconds (trace time, XR frame time…). The
 * model stamps every pose with the session clock on arrival (`options.now`) and keeps the offset
 * between the two clocks as the minimum of (arrival − t) over the last second of arrivals — the
 * least-delayed delivery, so event-loop jitter does not move it, yet a paused or restarted source
 * is re-aligned within a second. The prediction horizon is then timeMs − (latest t + offset),
 * at least 0. The predictor itself sees only source times, so their true spacing drives it.
 *
 * A pose whose time is not after the latest one means the source was replaced or restarted (a new
 * trace replay, another camera): the model starts over with a fresh predictor and clock offset
 * rather than failing — except an exact repeat of the latest time, which is dropped.
 *
 * Before the first pose the model assumes the scene's default viewpoint (docs/mpd.md: outside the
 * objects' boxes, looking at the origin), overridable with `options.initialPose`.
 *
 * Cost: one ray pass over all objects per (time, pose, projection), cached, so ranking N objects
 * at one time costs one pass; about 2k rays against a handful of ellipsoids is well under 1 ms
 * (measured in docs/benchmarks.md, "Viewport model").
 */
import type { SceneModel } from '../model/scene';
import type { ViewportModel, Pose } from '../model/pose';
import type { Predictor } from './predictor';
import { createDefaultPredictor } from './predictors';
import { checkProjection, proxiesFromScene, visibleFractions, type ObjectProxy, type Projection, type RaycastOptions } from './raycast';

export interface ViewportModelOptions {
  /** Makes the head-pose predictor, again after a source restart (default {@link createDefaultPredictor}). */
  createPredictor?: () => Predictor;
  /** Name reported in stats and QoE logs (default: `default` for the default predictor, else the predictor's class name). */
  predictorName?: string;
  /** Initial camera projection (default 60° vertical, 16:9). */
  projection?: Projection;
  /** Ray count, FoV margin and occlusion switch (see {@link RaycastOptions}). */
  raycast?: RaycastOptions;
  /** Session clock in ms, the clock of `visibleArea`'s `timeMs` (default `performance.now()`). */
  now?: () => number;
  /** Viewpoint assumed until the first pose arrives. */
  initialPose?: Pose;
}

export interface PredictiveViewportModel extends ViewportModel {
  /** Which predictor drives the model, for stats and QoE logs. */
  readonly predictorName: string;
  /** Feeds one pose from the pose source (in the source's time order). */
  observe(pose: Pose): void;
  setProjection(projection: Projection): void;
  /** The predicted head pose at session time `timeMs` (its `t` is on the source's clock). */
  predictedPose(timeMs: number): Pose;
  /** Predicted screen fraction of every object at `timeMs`, by object id. */
  visibleAreas(timeMs: number): ReadonlyMap<string, number>;
}

/** How long an arrival counts for the clock offset (the minimum over this window). */
const OFFSET_WINDOW_MS = 1000;

export function createViewportModel(scene: SceneModel, options: ViewportModelOptions = {}): PredictiveViewportModel {
  const proxies = proxiesFromScene(scene);
  const createPredictor = options.createPredictor ?? createDefaultPredictor;
  let predictor = createPredictor();
  const now = options.now ?? (() => performance.now());
  const raycast = { ...options.raycast };
  let projection = options.projection ?? { fovYDeg: 60, aspect: 16 / 9 };
  checkProjection(projection);
  const fallback = options.initialPose ?? defaultViewpoint(proxies);
  // One pass now, so bad ray-cast options fail here rather than at the first ranking.
  visibleFractions(proxies, fallback, projection, raycast);

  let latest: Pose | undefined;
  /** Recent arrivals: session ms and offset (arrival − source t) in ms. */
  const arrivals: { at: number; offset: number }[] = [];
  let cache: { timeMs: number; version: number; areas: Map<string, number> } | undefined;
  let version = 0;

  const predictedPose = (timeMs: number): Pose => {
    if (!latest) return fallback;
    let offset = Infinity;
    for (const a of arrivals) offset = Math.min(offset, a.offset);
    const horizonMs = Math.max(0, timeMs - (latest.t * 1000 + offset));
    return predictor.predict(horizonMs);
  };

  const visibleAreas = (timeMs: number): ReadonlyMap<string, number> => {
    if (!Number.isFinite(timeMs)) throw new Error(`visibleArea: time ${timeMs} ms is not finite`);
    if (cache && cache.timeMs === timeMs && cache.version === version) return cache.areas;
    const fractions = visibleFractions(proxies, predictedPose(timeMs), projection, raycast);
    const areas = new Map(proxies.map((p, i) => [p.id, fractions[i]]));
    cache = { timeMs, version, areas };
    return areas;
  };

  return {
    predictorName: options.predictorName ?? (options.createPredictor ? predictor.constructor.name : 'default'),
    observe(pose: Pose): void {
      if (!Number.isFinite(pose.t)) throw new Error(`viewport model: pose time ${pose.t} is not finite`);
      if (latest && pose.t === latest.t) return;
      if (latest && pose.t < latest.t) {
        predictor = createPredictor();
        arrivals.length = 0;
      }
      predictor.observe(pose);
      latest = pose;
      const at = now();
      arrivals.push({ at, offset: at - pose.t * 1000 });
      while (arrivals.length > 1 && arrivals[0].at < at - OFFSET_WINDOW_MS) arrivals.shift();
      version++;
    },
    setProjection(next: Projection): void {
      checkProjection(next);
      projection = { ...next };
      version++;
    },
    predictedPose,
    visibleAreas,
    visibleArea(objectId: string, timeMs: number): number {
      const area = visibleAreas(timeMs).get(objectId);
      if (area === undefined) throw new Error(`viewport model: unknown object "${objectId}"`);
      return area;
    },
  };
}

/**
 * Eye height 1.6 m on the +z axis, 1.5 m beyond the farthest object, looking at the origin
 * (identity orientation looks along −z).
 */
function defaultViewpoint(proxies: readonly ObjectProxy[]): Pose {
  let reach = 0;
  for (const p of proxies) reach = Math.max(reach, Math.hypot(p.center[0], p.center[2]) + Math.max(p.radii[0], p.radii[2]));
  return { t: 0, position: [0, 1.6, reach + 1.5], orientation: [0, 0, 0, 1] };
}
