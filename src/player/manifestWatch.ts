/**
 * Reading the manifest: once at load, and again every `minimumUpdatePeriod` while the scene
 * grows (docs/mpd.md → "A growing scene"), as a DASH player re-reads a dynamic MPD.
 *
 * Every read goes through the browser's HTTP cache in `no-cache` mode: the browser revalidates
 * the copy it holds with `If-None-Match` (the origin's ETag; `If-Modified-Since` on hosts without
 * ETags), so an unchanged manifest costs a 304 on the wire — over HTTP/2 or HTTP/3, whichever the
 * browser reaches the host by — and the same text, which is not parsed again. A changed one is
 * parsed and handed on; once a read gives a static (final) manifest the watch ends.
 */
import type { SceneModel } from '../model/scene';
import { fetchWithRetry } from '../transport/retry';
import { type Clock, realClock } from './clock';
import { parseManifest } from './mpd';
import { growScene, type SceneGrowth } from './sceneGrowth';
import { keepDecodable } from './decodable';

/** Reads the manifest at `url` (revalidating the browser's copy) and returns its text. */
export async function fetchManifestText(url: URL, signal?: AbortSignal): Promise<string> {
  const response = await fetchWithRetry(url, { cache: 'no-cache', signal });
  if (!response.ok) throw new Error(`${url.href}: HTTP ${response.status}`);
  return response.text();
}

/** The longest wait between reads after failed ones (the wait doubles from the update period). */
const MAX_RETRY_S = 30;

export interface ManifestWatchOptions {
  url: URL;
  /** The text the scene was parsed from (an identical read is no news). */
  text: string;
  /** Seconds between reads, from the manifest (it may change with each read). */
  updatePeriodS: number;
  /** A changed manifest, parsed. Throwing refuses it (the watch goes on, reporting the error). */
  onManifest(scene: SceneModel): void;
  /** A read or a manifest that failed; the watch tries again later. */
  onProblem(message: string): void;
  clock?: Clock;
  /** The manifest's text at `url` (default: `fetchManifestText`). */
  read?: (url: URL, signal: AbortSignal) => Promise<string>;
}

/** Re-reads a growing scene's manifest until it is final or `stop()` is called. */
export class ManifestWatch {
  private readonly stopped = new AbortController();
  private lastText: string;
  private periodS: number;
  /** Reads so far, and the ones whose text had changed (for stats and tests). */
  reads = 0;
  changes = 0;

  constructor(private readonly options: ManifestWatchOptions) {
    this.lastText = options.text;
    this.periodS = options.updatePeriodS;
    void this.run();
  }

  stop(): void {
    this.stopped.abort(new Error('manifest watch stopped'));
  }

  get running(): boolean {
    return !this.stopped.signal.aborted;
  }

  private async run(): Promise<void> {
    const clock = this.options.clock ?? realClock;
    const read = this.options.read ?? fetchManifestText;
    const signal = this.stopped.signal;
    let waitS = this.periodS;
    try {
      while (!signal.aborted) {
        await clock.sleep(waitS, signal);
        try {
          const text = await read(this.options.url, signal);
          this.reads++;
          if (text !== this.lastText) {
            const scene = parseManifest(text);
            this.options.onManifest(scene);
            this.lastText = text;
            this.changes++;
            if (scene.updatePeriodS === undefined) break;
            this.periodS = scene.updatePeriodS;
          }
          waitS = this.periodS;
        } catch (e) {
          if (signal.aborted) break;
          this.options.onProblem(e instanceof Error ? e.message : String(e));
          waitS = Math.min(MAX_RETRY_S, Math.max(waitS * 2, this.periodS));
        }
      }
    } catch {
      // Stopped while sleeping.
    }
    this.stopped.abort(new Error('manifest final'));
  }
}

/**
 * Follows a growing scene (docs/mpd.md → "A growing scene"): re-reads its manifest every update
 * period and extends `scene` in place with each newer one (sceneGrowth.ts), telling `onGrowth`
 * what changed; a manifest that is not a growth of it is refused through `onProblem` (the one
 * playing stays valid). Null for a final scene, which is never re-read.
 */
export function followGrowingScene(p: Pick<ManifestWatchOptions, 'url' | 'text' | 'onProblem' | 'clock' | 'read'> & {
  scene: SceneModel;
  /** The decoder's largest atlas (decodable.ts): newer manifests' ladders are cut as the first's was. */
  maxAtlasSamples?: number;
  onGrowth(growth: SceneGrowth): void;
}): ManifestWatch | null {
  if (p.scene.updatePeriodS === undefined) return null;
  return new ManifestWatch({
    url: p.url, text: p.text, updatePeriodS: p.scene.updatePeriodS, onProblem: p.onProblem, clock: p.clock, read: p.read,
    onManifest: (next) => {
      const growth = growScene(p.scene, keepDecodable(next, p.maxAtlasSamples));
      if (growth.changed) p.onGrowth(growth);
    },
  });
}
