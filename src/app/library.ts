/**
 * The npm library entry (`npm run build:lib` → dist-lib/): importing it registers
 * `<holoquic-player>`; the element class, the `Player` facade and their types are exported for
 * code that wants the typed API or its own UI, and `HoloquicObject` puts a scene into an
 * application's own three.js scene.
 */
import { defineHoloquicPlayer } from './component';

export { defineHoloquicPlayer, HoloquicPlayerElement, PLAYER_EVENTS, type HoloquicPlayerOptions, type HoloquicStats } from './component';
export { Player } from '../player/player';
export { type CurrentFrame } from '../player/framesOnScreen';
export { type PlayerOptions } from '../player/options';
export { type ObjectStats, type PlayerState, type PlayerStats } from '../player/report';
export { PLAYER_MODES, type PlayerMode } from '../model/modes';
export type { SceneModel, SceneObject } from '../model/scene';
export type { PointFrame } from '../model/frames';
export type { SegmentDecoder } from '../model/decoder';
export { createDecoderPool, CodecUnavailableError, type DecoderPoolOptions, type HevcModuleLocation } from '../decoder';
export type { Pose, PoseSource } from '../model/pose';
export { TracePoseSource } from '../viewport/traceSource';
export { parseTrace } from '../viewport/trace';
export type { QoeLog } from '../model/qoe';
export { SceneRenderer, type RenderStats } from '../render/sceneRenderer';
export { HoloquicObject, type HoloquicObjectOptions } from './holoquicObject';
export type { SplatShape } from '../render/pointMaterial';
export type { XRMode } from '../render/xr';

defineHoloquicPlayer();
