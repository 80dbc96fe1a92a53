/**
 * V3C levels as the player budgets by them: the largest atlas (width × height, in samples) each
 * level allows (ISO/IEC 23090-5 Annex A, MaxAtlasSize). A manifest declares a Representation's
 * level as its `ptl_level_idc`, 30 × the level number (docs/mpd.md, `hq:v3cLevelIdc`); the
 * player refuses a Representation whose level allows atlases larger than its decoder takes, and
 * the decoder holds each segment to the level its manifest declared.
 */

const MAX_ATLAS_SAMPLES_BY_LEVEL: ReadonlyMap<number, number> = new Map([
  [30, 2_228_224], [45, 2_228_224], // levels 1.0, 1.5 (e.g. 2048 × 1088)
  [60, 8_912_896], [75, 8_912_896], // levels 2.0, 2.5 (e.g. 4096 × 2176)
  [90, 35_651_584], [105, 35_651_584], // levels 3.0, 3.5 (e.g. 8192 × 4352)
]);

/** MaxAtlasSize of the level `levelIdc` names, or undefined when it names none. */
export function levelMaxAtlasSamples(levelIdc: number): number | undefined {
  return MAX_ATLAS_SAMPLES_BY_LEVEL.get(levelIdc);
}

/** "2.0" for 60: the level number a `ptl_level_idc` stands for, for messages. */
export function levelName(levelIdc: number): string {
  return (levelIdc / 30).toFixed(1);
}
