/**
 * Loading a scene for the `Player` (player.ts): the manifest read into the scene model, and the
 * transports connected to the origin that serves it. Each failure carries the code the player
 * reports it under — the manifest's is the source's (`SRC_NOT_SUPPORTED`), the connection's the
 * network's (`NETWORK`).
 */
import type { SceneModel } from '../model/scene';
import { connectTransports, prefetchOriginConfig, type Transports } from '../transport/connect';
import type { OriginConfig } from '../transport/originConfig';
import { keepDecodable } from './decodable';
import { fetchManifestText } from './manifestWatch';
import { parseManifest } from './mpd';
import type { PlayerOptions } from './options';
import { PLAYER_ERROR, type PlayerErrorCode } from './report';

/** An error with the code it is reported under. */
export class CodedError extends Error {
  constructor(message: string, readonly code: PlayerErrorCode) {
    super(message);
  }
}

/** A manifest read: the scene, the text it was read from, and where it is. */
export interface ManifestRead {
  scene: SceneModel;
  text: string;
  url: URL;
  /** The path segment URLs are resolved against (the manifest's folder). */
  contentBase: string;
}

/** Where the manifest is: `options.manifestUrl`, relative to the page. */
function manifestLocation(options: Pick<PlayerOptions, 'manifestUrl'>): URL {
  return new URL(options.manifestUrl, globalThis.location?.href);
}

/** The origin whose configuration and transports serve the scene: `options.origin`, else the manifest's. */
function sceneOrigin(options: Pick<PlayerOptions, 'manifestUrl' | 'origin'>): string {
  return options.origin ?? manifestLocation(options).origin;
}

/**
 * Asks the scene's origin for its `/config.json` (where the WebTransport session is) at once, so
 * that it comes beside the manifest and `connectScene` need not wait a round trip for it.
 */
export function prefetchSceneConfig(options: Pick<PlayerOptions, 'manifestUrl' | 'origin'>): Promise<OriginConfig> | undefined {
  return prefetchOriginConfig(sceneOrigin(options));
}

/** Reads the manifest (`options.manifestUrl`, relative to the page) into the scene model. */
export async function readManifest(options: Pick<PlayerOptions, 'manifestUrl' | 'decoder'>): Promise<ManifestRead> {
  const url = manifestLocation(options);
  const contentBase = new URL('.', url).pathname;
  try {
    const text = await fetchManifestText(url);
    // Representations above the level the decoder takes are left out before anything is fetched.
    return { scene: keepDecodable(parseManifest(text), options.decoder.maxAtlasSamples), text, url, contentBase };
  } catch (e) {
    throw new CodedError(e instanceof Error ? e.message : String(e), PLAYER_ERROR.SRC_NOT_SUPPORTED);
  }
}

/**
 * Connects the transports to the origin of `options.origin`, else the manifest's: WebTransport to
 * the endpoints the origin's configuration (`originConfig` if already asked for) and the manifest
 * list, and HTTP/2.
 */
export async function connectScene(options: PlayerOptions, manifest: ManifestRead, originConfig?: Promise<OriginConfig>): Promise<Transports> {
  const originBase = sceneOrigin(options);
  try {
    return await connectTransports(originBase, {
      originConfig,
      webtransportUrl: options.webtransportUrl,
      manifestEndpoints: manifest.scene.webtransportEndpoints,
      // Read from the same host, the manifest proved HTTP/2 reaches it; another origin is asked for it.
      http2Probe: new URL(originBase).origin === manifest.url.origin ? undefined : manifest.url.pathname + manifest.url.search,
      stallTimeoutMs: options.stallTimeoutS === undefined ? undefined : options.stallTimeoutS * 1000,
      largestObjectBytes: largestObjectBytes(manifest.scene),
    });
  } catch (e) {
    throw new CodedError(e instanceof Error ? e.message : String(e), PLAYER_ERROR.NETWORK);
  }
}

/**
 * The largest object (one segment of one representation) the manifest lets the player expect: a
 * representation's `bandwidth` is its peak segment rate, so no segment is larger than it over a
 * segment's duration. The FEC worker reserves room for decoding it when the session opens, so its
 * memory reaches its high-water mark at the start and not the first time the ABR climbs.
 */
function largestObjectBytes(scene: SceneModel): number {
  const peak = Math.max(0, ...scene.objects.flatMap((o) => o.representations.map((r) => r.bandwidth)));
  return Math.ceil((peak * scene.segmentDuration) / 8);
}
