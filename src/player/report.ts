/**
 * What the player reports, assembled from the playout session's state: its lifecycle state, the
 * live statistics (`getStats()`, the demo's overlay) and the QoE log of a run (`qoe()`,
 * `holoquic-qoe/1`, src/model/qoe.ts). Reading only: nothing here changes playback.
 */
import { framePoints } from '../model/frames';
import type { PlanDelivery, PlayerMode } from '../model/modes';
import { QOE_SCHEMA, type QoeLog, type QoeSegment, type QoeTotals } from '../model/qoe';
import type { SceneObject } from '../model/scene';
import { currentFallbackReason, type Transports, webTransportUsable } from '../transport/connect';
import { DEFAULT_STALL_TIMEOUT_MS } from '../transport/stall';
import { volatileTargetS } from './bufferTarget';
import { transportKind } from './plan';
import type { ObjectPlayback } from './framesOnScreen';
import { DEFAULT_BUFFER_TARGET_S, type PlayoutSession } from './playout';
import { fecTargetFor } from './policy';
import { knapsackRule } from './rules';

export type PlayerState = 'idle' | 'loading' | 'ready' | 'playing' | 'paused' | 'ended' | 'failed';

/**
 * Why playback failed, as `MediaError.code` numbers it: 1 aborted, 2 network (the origin or its
 * transports unreachable), 3 decode (the playback pipeline stopped), 4 source not supported (the
 * manifest could not be fetched or read, or the options are invalid).
 */
export type PlayerErrorCode = 1 | 2 | 3 | 4;
export const PLAYER_ERROR = { ABORTED: 1, NETWORK: 2, DECODE: 3, SRC_NOT_SUPPORTED: 4 } as const;

export interface ObjectStats {
  id: string;
  quality: number;
  delivery: PlanDelivery | null;
  /** 0 = most visible at the last request. */
  rank: number;
  visibleArea: number;
  points: number;
  stale: boolean;
  /** The segment shown now, on the timeline (-1 before the first), and the frame of it drawn now. */
  segment: number;
  frameIndex: number;
}

export interface PlayerStats {
  state: PlayerState;
  mode: PlayerMode;
  transport: 'webtransport' | 'http2' | null;
  /** Why requests go over HTTP/2 now although the mode would use WebTransport (null while it does). */
  fallbackReason: string | null;
  /** The WebTransport endpoint (session URL) in use, null when none is open. */
  endpoint: string | null;
  /** Switches of path so far (endpoint to endpoint, to HTTP/2 and back), and why the last one happened. */
  switches: number;
  lastSwitchReason: string | null;
  playedS: number;
  /** Seconds into the pass (the element's `currentTime`). */
  positionS: number;
  /** A seek is under way. */
  seeking: boolean;
  /** The scene is still being packed: its manifest is re-read and may grow (docs/mpd.md → "A growing scene"). */
  growing: boolean;
  /** Playback stands at the end of what the growing scene has published, waiting for more (not a freeze). */
  waitingForContent: boolean;
  /** Seconds of content ready ahead of the playhead (objects decoded for coming segments). */
  bufferS: number;
  throughputBps: number | null;
  lossRate: number;
  meanLossBurst: number;
  /** The path's round trip (src/transport/pathRtt.ts), its minimum, and which measurement gave them. */
  rttS: number;
  minRttS: number;
  rttSource: 'origin' | 'responses' | null;
  /** Repair symbols sent ÷ source symbols, over the datagram objects so far. */
  fecOverhead: number | null;
  meanDecodeMs: number | null;
  /** The RaptorQ (FEC) worker's wasm memory, bytes (0 before any datagram object; null without WebTransport). */
  fecWorkerMemoryBytes: number | null;
  freezes: number;
  freezeTotalS: number;
  objects: ObjectStats[];
}

/** What `playerStats` reads. */
export interface StatsSource {
  state: PlayerState;
  mode: PlayerMode;
  session: PlayoutSession | null;
  transports: Transports | null;
  objects: readonly SceneObject[];
  playback: ReadonlyMap<string, ObjectPlayback>;
  lastPlan: ReadonlyMap<string, { rank: number; visibleArea: number; delivery: PlanDelivery }>;
  /** What the renderer is given now, per object. */
  frames: ReadonlyMap<string, { frameIndex: number; segment: number } | null>;
  positionS: number;
  seeking: boolean;
  growing: boolean;
}

/** The player options a QoE log records (`PlayerOptions`' fields of the same names). */
export interface QoeOptions {
  manifestUrl: string;
  abr?: string;
  bufferTargetS?: number;
  volatileBufferTargetS?: number;
  stallTimeoutS?: number;
  fecTarget?: number;
  lateUpgrades?: boolean;
}

/** What `qoeLog` reads. */
export interface QoeSource {
  options: QoeOptions;
  mode: PlayerMode;
  session: PlayoutSession | null;
  transports: Transports | null;
  /** Session-clock seconds of `load()` and of the end of the run (now, while it runs). */
  loadedAt: number;
  endedAt: number;
  startedAtIso: string;
  reliableCount: number | undefined;
  predictor: string;
  segmentDurationS: number;
}

export function playerStats(src: StatsSource): PlayerStats {
  const session = src.session;
  const network = session?.network();
  const records = session?.segmentRecords() ?? [];
  const datagrams = records.filter((r) => r.delivery === 'datagram' && (r.sourceSymbols ?? 0) > 0 && r.symbolsSent !== undefined);
  const source = datagrams.reduce((a, r) => a + (r.sourceSymbols ?? 0), 0);
  const sent = datagrams.reduce((a, r) => a + (r.symbolsSent ?? 0), 0);
  const decodeTimes = records.filter((r) => r.decodeMs !== undefined).slice(-40).map((r) => r.decodeMs!);
  const freezes = session?.freezeSummary();
  return {
    state: src.state,
    mode: src.mode,
    transport: src.transports ? transportKind(src.mode, webTransportUsable(src.transports)) : null,
    fallbackReason: currentFallbackReason(src.transports),
    endpoint: src.transports?.webtransport?.endpoint ?? null,
    switches: src.transports?.webtransport?.switches.length ?? 0,
    lastSwitchReason: src.transports?.webtransport?.switches.at(-1)?.reason ?? null,
    playedS: session?.playedS() ?? 0,
    positionS: src.positionS,
    seeking: src.seeking,
    growing: src.growing,
    waitingForContent: session?.waitingAtLiveEdge ?? false,
    bufferS: session?.bufferedS() ?? 0,
    throughputBps: network?.throughputBps ?? null,
    lossRate: network?.loss.rate ?? 0,
    meanLossBurst: network?.loss.meanBurst ?? 1,
    rttS: network?.rttS ?? 0,
    minRttS: network?.minRttS ?? 0,
    rttSource: network?.rttSource ?? null,
    fecOverhead: source > 0 ? (sent - source) / source : null,
    meanDecodeMs: decodeTimes.length ? decodeTimes.reduce((a, b) => a + b, 0) / decodeTimes.length : null,
    fecWorkerMemoryBytes: src.transports?.webtransport?.fecMemoryBytes ?? null,
    freezes: freezes?.count ?? 0,
    freezeTotalS: (freezes?.totalMs ?? 0) / 1000,
    objects: src.objects.map((o, i) => {
      const p = src.playback.get(o.id);
      const plan = src.lastPlan.get(o.id);
      const now = src.frames.get(o.id);
      return {
        id: o.id, quality: p?.quality ?? -1, delivery: plan?.delivery ?? null,
        rank: plan?.rank ?? i, visibleArea: plan?.visibleArea ?? 0,
        points: p && p.decoded.frames.length ? framePoints(p.decoded.frames[0]) : 0, stale: p?.stale ?? false,
        segment: now?.segment ?? -1, frameIndex: now?.frameIndex ?? -1,
      };
    }),
  };
}

/** The `holoquic-qoe/1` log of a run (complete once the player has ended). */
export function qoeLog(p: QoeSource): QoeLog {
  const session = p.session;
  const origin = p.loadedAt;
  const now = p.endedAt;
  const freezes = session?.freezeSummary().freezes ?? [];
  // Segment records are on the session's time base (seconds since play()); the log's is load().
  const shift = session ? session.originS - origin : 0;
  const segments = (session?.segmentRecords() ?? []).map((r) => recordOnLogTimeBase(r, shift));
  const fecTarget = fecTargetFor(p.mode, p.options.fecTarget);
  const dropped = session?.segmentRecordsDropped() ?? 0;
  return {
    schema: QOE_SCHEMA,
    config: {
      mode: p.mode,
      abr: p.mode === 'adaptive' ? 'adaptive' : (p.options.abr ?? knapsackRule.name),
      bufferTargetS: p.options.bufferTargetS ?? DEFAULT_BUFFER_TARGET_S,
      volatileBufferTargetS: volatileTargetS(p.options.bufferTargetS ?? DEFAULT_BUFFER_TARGET_S, p.options.volatileBufferTargetS),
      stallTimeoutS: p.options.stallTimeoutS ?? DEFAULT_STALL_TIMEOUT_MS / 1000,
      ...(fecTarget !== undefined ? { fecTarget } : {}),
      reliableCount: p.reliableCount,
      ...(p.options.lateUpgrades ? { lateUpgrades: true } : {}),
      manifest: p.options.manifestUrl,
      // The path at the start; `switches` says where it went later.
      transport: p.transports?.webtransport && !p.transports.fallbackReason && p.mode !== 'h2' ? 'webtransport' : 'http2',
      predictor: p.predictor,
      segmentDurationS: p.segmentDurationS,
    },
    startedAt: p.startedAtIso,
    userAgent: globalThis.navigator?.userAgent ?? 'unknown',
    playback: {
      startupS: session && Number.isFinite(session.startup) ? session.startup + shift : NaN,
      playedS: session?.playedS() ?? 0,
      wallS: Number.isFinite(origin) ? now - origin : 0,
      sessionsReplaced: p.transports?.webtransport?.stallReplacements ?? 0,
    },
    freezes: freezes.map((f) => ({ atS: f.startMs / 1000 - origin, durationS: f.durationMs / 1000, cause: f.cause })),
    segments,
    ...(p.transports?.webtransport ? {
      switches: p.transports.webtransport.switches.map((s) => ({ atS: s.atMs / 1000 - origin, from: s.from, to: s.to, reason: s.reason })),
    } : {}),
    starved: (session?.starvedWindows() ?? []).map((w) => ({ ...w, atS: w.atS + shift })),
    ...(dropped > 0 && session ? { segmentsDropped: dropped, totals: shiftedTotals(session.segmentTotals(), shift) } : {}),
  };
}

/**
 * A segment record moved from the session's time base (seconds since play()) to the log's
 * (seconds since load()): `shift` is the session's origin less load()'s. One conversion for the
 * log's `segments` and the records the player streams out (`qoesegment`), so both read alike.
 */
export function recordOnLogTimeBase(r: QoeSegment, shift: number): QoeSegment {
  return {
    ...r,
    requestedAtS: r.requestedAtS + shift, deadlineS: r.deadlineS + shift,
    firstByteAtS: r.firstByteAtS === undefined ? undefined : r.firstByteAtS + shift,
    completedAtS: r.completedAtS === undefined ? undefined : r.completedAtS + shift,
  };
}

/** The session's running totals on the log's time base (records are shifted by `shift` seconds). */
function shiftedTotals(totals: Readonly<QoeTotals>, shift: number): QoeTotals {
  const copy = structuredClone(totals) as QoeTotals;
  if (copy.volatileFromS !== null) copy.volatileFromS += shift;
  return copy;
}
