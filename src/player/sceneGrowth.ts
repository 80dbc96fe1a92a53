/**
 * Growing a loaded scene from a newer manifest of the same scene (docs/mpd.md → "A growing
 * scene"): the packer publishes a scene in stages, each manifest naming more seconds or more
 * qualities than the one before, and never changing a segment it named. `growScene` checks that
 * the newer manifest is such a growth of the scene the player holds and extends that scene in
 * place, so every stage that reads it (planning, the ABR, the playout loop) sees the new seconds
 * and rungs from its next read.
 *
 * What is taken from the newer manifest: the pass duration and each object's distinct segments
 * (both may only grow), Representations it adds, the rates and point counts of the ones the
 * player has (recomputed over more segments), and whether the scene still grows. What is kept
 * from the first: the objects, their placement and bounding boxes — the renderer and the
 * viewport model placed them once, and moving them while they play would make them jump — and
 * the WebTransport endpoints the transports were opened with.
 */
import type { Representation, SceneModel, SceneObject } from '../model/scene';
import { ManifestError } from './mpd';

/** What a newer manifest changed, for events and tests. */
export interface SceneGrowth {
  /** The pass lasts longer (seconds before → after). */
  durationS: { before: number; after: number };
  /** Representations added, per object id (their ids). */
  addedRungs: Record<string, string[]>;
  /** The newer manifest is final (static): the scene will not grow any more. */
  finished: boolean;
  /** Anything changed at all (a manifest re-read unchanged gives false). */
  changed: boolean;
}

/**
 * Extends `scene` in place with what `next` (the same scene's newer manifest) adds. Throws
 * `ManifestError` naming the first difference when `next` is not a growth of `scene` — another
 * scene, fewer seconds or qualities, a segment template or mapping that would name other files —
 * and then leaves `scene` unchanged: the files it names stay valid, so playback goes on with it.
 */
export function growScene(scene: SceneModel, next: SceneModel): SceneGrowth {
  checkGrowth(scene, next);
  const before = scene.passDuration;
  const addedRungs: Record<string, string[]> = {};
  let changed = next.passDuration !== before || (scene.updatePeriodS !== undefined) !== (next.updatePeriodS !== undefined);
  next.objects.forEach((grown, i) => {
    const object = scene.objects[i];
    if (grown.loopSegments !== object.loopSegments) changed = true;
    object.loopSegments = grown.loopSegments;
    const known = new Map(object.representations.map((r) => [r.id, r]));
    const added: string[] = [];
    // The newer ladder in its order (increasing rank); a known rung keeps its object, updated.
    object.representations = grown.representations.map((r) => {
      const held = known.get(r.id);
      if (!held) {
        added.push(r.id);
        return { ...r };
      }
      if (!sameRates(held, r)) changed = true;
      return Object.assign(held, r);
    });
    if (added.length) addedRungs[object.id] = added;
  });
  if (Object.keys(addedRungs).length) changed = true;
  scene.passDuration = next.passDuration;
  if (next.updatePeriodS !== undefined) scene.updatePeriodS = next.updatePeriodS;
  else delete scene.updatePeriodS;
  return { durationS: { before, after: scene.passDuration }, addedRungs, finished: next.updatePeriodS === undefined, changed };
}

function sameRates(a: Representation, b: Representation): boolean {
  return a.bandwidth === b.bandwidth && a.avgBandwidth === b.avgBandwidth && a.pointsPerFrame === b.pointsPerFrame && a.rank === b.rank;
}

/** Throws unless `next` only adds to `scene` (see `growScene`). */
function checkGrowth(scene: SceneModel, next: SceneModel): void {
  const fail = (what: string): never => {
    throw new ManifestError(`the re-read manifest is not a growth of the scene playing: ${what}`);
  };
  if (next.scene !== scene.scene) fail(`scene "${next.scene}", was "${scene.scene}"`);
  if (next.segmentDuration !== scene.segmentDuration) fail(`segments of ${next.segmentDuration} s, were ${scene.segmentDuration} s`);
  if (next.passDuration < scene.passDuration) fail(`the pass shrank from ${scene.passDuration} s to ${next.passDuration} s`);
  const ids = (s: SceneModel) => s.objects.map((o) => o.id).join(', ');
  if (ids(next) !== ids(scene)) fail(`objects ${ids(next)}, were ${ids(scene)}`);
  next.objects.forEach((grown, i) => checkObject(scene.objects[i], grown, fail));
}

function checkObject(object: SceneObject, grown: SceneObject, fail: (what: string) => never): void {
  const id = object.id;
  for (const key of ['codecs', 'mediaTemplate', 'startNumber', 'playMode'] as const) {
    if (grown[key] !== object[key]) fail(`${id}: ${key} ${JSON.stringify(grown[key])}, was ${JSON.stringify(object[key])}`);
  }
  if (grown.loopSegments < object.loopSegments) fail(`${id}: ${grown.loopSegments} distinct segments, were ${object.loopSegments}`);
  // A quality is an index into the ladder (plans, the ABR's last choice, requests in flight hold
  // it): the known rungs must stay first, in their order, and new ones come above them.
  object.representations.forEach((r, q) => {
    const kept = grown.representations[q];
    if (kept?.id !== r.id) {
      const where = grown.representations.findIndex((g) => g.id === r.id);
      fail(where < 0 ? `${id}: Representation ${r.id} is gone` : `${id}: Representation ${r.id} moved from quality ${q} to ${where} (new rungs go above the known ones)`);
    }
    if (kept.rank !== r.rank) fail(`${id}/${r.id}: hq:qualityRank ${kept.rank}, was ${r.rank}`);
  });
}
