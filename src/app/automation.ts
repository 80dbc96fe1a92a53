/**
 * The page's automation contract (docs/qoe.md → "Headless player page"): URL parameters that
 * configure a player, and `window.holoquic` through which the QoE runner and the end-to-end tests
 * watch it. The demo app and the headless experiment mode (`render=0`) share it.
 */
import type { Player } from '../player/player';
import type { PlayerOptions } from '../player/options';
import type { PlayerStats } from '../player/report';
import { PLAYER_MODES, type PlayerMode } from '../model/modes';
import type { QoeLog } from '../model/qoe';
import { fetchWithRetry } from '../transport/retry';
import { parseTrace } from '../viewport/trace';
import { TracePoseSource } from '../viewport/traceSource';

/** The player options a page's URL can set (`wt`, `abr`, `k`, `reliability`, `buffer`, …), documented on `PlayerOptions`. */
type PagePlayerOptions = Pick<PlayerOptions, 'webtransportUrl' | 'abr' | 'reliableCount' | 'reliability' | 'bufferTargetS' |
  'volatileBufferTargetS' | 'stallTimeoutS' | 'fecTarget' | 'lateUpgrades' | 'pipelineAhead' | 'durationS' | 'qoeSegmentsKept'>;

export interface PageParams extends PagePlayerOptions {
  /** Origin base URL (its /config.json names the WebTransport endpoint; default the page's). */
  origin: string;
  /** Manifest URL (absolute, or a path on the origin). */
  manifestUrl: string;
  mode: PlayerMode;
  /** URL of a pose trace to replay instead of the camera. */
  pose?: string;
  poseConvention: 'webxr' | 'unity';
  autoplay: boolean;
  /** false: the whole pipeline without drawing (experiments). */
  render: boolean;
}

/** Reads the page's URL parameters; a malformed value is an error naming the parameter. */
export function readPageParams(search: string, pageOrigin: string): PageParams {
  const q = new URLSearchParams(search);
  const number = (name: string, check: (v: number) => boolean): number | undefined => {
    const text = q.get(name);
    if (text === null || text === '') return undefined;
    const value = Number(text);
    if (!Number.isFinite(value) || !check(value)) throw new Error(`URL parameter ${name}=${text} is not valid`);
    return value;
  };
  const origin = q.get('origin') ?? pageOrigin;
  const mode = (q.get('mode') ?? 'qpr-fec') as PlayerMode;
  if (!PLAYER_MODES.includes(mode)) throw new Error(`URL parameter mode=${mode} is not one of ${PLAYER_MODES.join(', ')}`);
  const convention = q.get('poseConvention') ?? 'webxr';
  if (convention !== 'webxr' && convention !== 'unity') throw new Error(`URL parameter poseConvention=${convention} is not webxr or unity`);
  return {
    origin,
    webtransportUrl: q.get('wt') ?? undefined,
    manifestUrl: new URL(q.get('manifest') ?? '/content/demo/manifest.mpd', origin).href,
    mode,
    abr: q.get('abr') ?? undefined,
    reliableCount: number('k', (v) => Number.isInteger(v) && v >= 0),
    reliability: reliabilityDegree(q.get('reliability')),
    bufferTargetS: number('buffer', (v) => v > 0),
    volatileBufferTargetS: number('volatile-buffer', (v) => v > 0),
    stallTimeoutS: number('stall-timeout', (v) => v >= 0),
    fecTarget: number('fec-target', (v) => v > 0 && v < 1),
    lateUpgrades: number('late-upgrade', (v) => v === 0 || v === 1) === 1 || undefined,
    pipelineAhead: number('pipeline-ahead', (v) => v === 0 || v === 1) === 1 || undefined,
    pose: q.get('pose') ?? undefined,
    poseConvention: convention,
    durationS: number('duration', (v) => v > 0),
    qoeSegmentsKept: number('qoe-kept', (v) => Number.isSafeInteger(v) && v >= 0),
    autoplay: q.get('autoplay') === '1',
    render: q.get('render') !== '0',
  };
}

function reliabilityDegree(text: string | null): string | undefined {
  if (text === null || text === '') return undefined;
  const m = /^Q(\d{1,3})$/i.exec(text);
  if (!m || Number(m[1]) > 100) throw new Error(`URL parameter reliability=${text} is not Q0 … Q100`);
  return text.toUpperCase();
}

/** The Player options the parameters ask for (the caller adds the decoder and viewport). */
export function playerOptionsFrom(params: PageParams): Omit<PlayerOptions, 'decoder'> {
  return {
    manifestUrl: params.manifestUrl, origin: params.origin, webtransportUrl: params.webtransportUrl, mode: params.mode, abr: params.abr,
    reliableCount: params.reliableCount, reliability: params.reliability, bufferTargetS: params.bufferTargetS,
    volatileBufferTargetS: params.volatileBufferTargetS, stallTimeoutS: params.stallTimeoutS, fecTarget: params.fecTarget,
    lateUpgrades: params.lateUpgrades, pipelineAhead: params.pipelineAhead, durationS: params.durationS, qoeSegmentsKept: params.qoeSegmentsKept,
  };
}

/** Loads the pose trace the parameters name, as a looping real-time replay. */
export async function tracePoseSource(params: PageParams): Promise<TracePoseSource | null> {
  if (!params.pose) return null;
  const url = new URL(params.pose, location.href).href;
  const response = await fetchWithRetry(url);
  if (!response.ok) throw new Error(`pose trace ${url}: HTTP ${response.status}`);
  const poses = parseTrace(await response.text(), {
    convention: params.poseConvention === 'unity' ? 'unity-left-handed' : 'right-handed', source: url,
  });
  return new TracePoseSource(poses, { loop: true });
}

export interface AutomationApi {
  state(): string;
  error(): string | null;
  qoe(): QoeLog | null;
  stats(): PlayerStats | null;
}

declare global {
  interface Window {
    holoquic?: AutomationApi;
  }
}

/**
 * Publishes `window.holoquic` for `player`, or for a page that failed before it had one (then
 * `state()` is `failed` and `error()` says why).
 */
export function exposeAutomation(player: Player | null, setupError: string | null = null): void {
  window.holoquic = {
    state: () => (setupError ? 'failed' : (player?.state ?? 'loading')),
    error: () => setupError ?? player?.error ?? null,
    qoe: () => player?.qoe() ?? null,
    stats: () => player?.getStats() ?? null,
  };
}
