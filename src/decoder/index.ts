/**
 * The V-PCC decoder of the player: a pool of decode workers, each hosting the wasm `vpcc` core
 * module (parsing, atlas, reconstruction, Rec1 post-processing) and WebCodecs for the video
 * sub-bitstreams (HEVC by the optional HEVC module, libde265, fetched only where the browser has
 * none).
 * `createDecoderPool()` makes the `SegmentDecoder` the `<holoquic-player>` element uses unless it
 * is given one; a `Player` has no default decoder.
 */
import { DecoderPool, type DecoderPoolOptions } from './pool';

export { DecoderPool, type DecoderPoolOptions, type DecoderPoolStats, type DetailedSegment } from './pool';
export { VpccError } from './vpcc';
export { CodecUnavailableError } from './video';
export type { HevcModuleLocation } from './hevc';
export type { CoreModuleInfo, CoreModuleKind } from './coreModule';

export function createDecoderPool(options: DecoderPoolOptions = {}): DecoderPool {
  return new DecoderPool(options);
}
