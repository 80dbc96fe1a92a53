/**
 * Ranking of objects by the viewport model's predicted visible area: the first step of planning
 * a segment (src/player/plan.ts), and how the viewport experiments order objects too.
 */
import type { ViewportModel } from '../model/pose';

export interface RankedObject {
  objectId: string;
  visibleArea: number;
}

/**
 * Objects ordered most visible first at the segment's playout time. Ties keep the given order so
 * the ranking is deterministic; a model returning a non-finite or negative area is an error.
 */
export function rankObjects(objectIds: string[], model: ViewportModel, timeMs: number): RankedObject[] {
  const ranked = objectIds.map((objectId, index) => {
    const visibleArea = model.visibleArea(objectId, timeMs);
    if (!Number.isFinite(visibleArea) || visibleArea < 0) {
      throw new Error(`viewport model returned invalid visible area ${visibleArea} for ${objectId}`);
    }
    return { objectId, visibleArea, index };
  });
  ranked.sort((a, b) => b.visibleArea - a.visibleArea || a.index - b.index);
  return ranked.map(({ objectId, visibleArea }) => ({ objectId, visibleArea }));
}
