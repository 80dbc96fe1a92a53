/**
 * Reading the origin's qlogs (JSON-SEQ `.sqlog`, one per QUIC connection, written with `--qlog`):
 * the events with their wall-clock time, and a per-interval summary of what the congestion
 * controller saw and did — to find out what limits a case (issue 35: an app-limited sender, a
 * probe left unfilled, losses in a queue) before changing the controller.
 */
import { median } from './matrix';

/** One qlog event: `name` (e.g. `quic:recovery_metrics_updated`), its data, and when. */
export interface QlogEvent {
  name: string;
  /** Milliseconds since the connection's reference time. */
  timeMs: number;
  /** Wall-clock milliseconds (Unix epoch), when the trace gave its reference time; else NaN. */
  wallMs: number;
  data: Record<string, unknown>;
}

/**
 * The events of one `.sqlog` text. Records that do not parse (the last one, cut off when the
 * origin stopped) are skipped; the trace header's wall-clock reference dates the events after it.
 */
export function readQlogEvents(text: string): QlogEvent[] {
  const events: QlogEvent[] = [];
  let reference = NaN;
  for (const record of text.split('\u001e')) {
    if (!record.trim()) continue;
    let parsed: { name?: unknown; time?: unknown; data?: unknown; trace?: { common_fields?: { reference_time?: { wall_clock_time?: unknown } } } };
    try {
      parsed = JSON.parse(record);
    } catch {
      continue;
    }
    const wallClock = parsed.trace?.common_fields?.reference_time?.wall_clock_time;
    if (typeof wallClock === 'string') {
      reference = Date.parse(wallClock);
      continue;
    }
    if (typeof parsed.name !== 'string' || typeof parsed.time !== 'number') continue;
    const data = parsed.data && typeof parsed.data === 'object' ? (parsed.data as Record<string, unknown>) : {};
    events.push({ name: parsed.name, timeMs: parsed.time, wallMs: reference + parsed.time, data });
  }
  return events;
}

/** What the sender did and saw in one interval of the connection. */
export interface QlogInterval {
  /** Start of the interval, seconds since the connection's reference time. */
  fromS: number;
  /** Bytes of packets sent per second, as Mbit/s. */
  sentMbps: number;
  /** Medians over the interval's metric updates (NaN when none was logged). */
  deliveryRateMbps: number;
  pacingRateMbps: number;
  congestionWindowKB: number;
  smoothedRttMs: number;
  /** Packets declared lost in the interval. */
  lostPackets: number;
}

/** One congestion-controller state (e.g. `bbr_probe_bw_up`): total time in it and its longest stay. */
export interface QlogState {
  state: string;
  totalS: number;
  longestS: number;
  /** When the longest stay began, seconds since the reference time. */
  longestFromS: number;
  entries: number;
}

export interface QlogSummary {
  intervals: QlogInterval[];
  states: QlogState[];
}

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** Adds `v × scale` to `xs` when `v` is a number (metric updates carry only the fields that changed). */
function push(xs: number[], v: unknown, scale: number): void {
  const n = num(v);
  if (n !== undefined) xs.push(n * scale);
}

/** Median, NaN when nothing was logged. */
const medianOrNaN = (xs: readonly number[]): number => (xs.length === 0 ? NaN : median(xs));

/**
 * Summarises a connection's events in intervals of `binS` seconds, and the time spent in each
 * congestion state (from `quic:congestion_state_updated`; the last state lasts to the last event).
 * Rates in quiche's qlog are bytes per second.
 */
export function summarizeQlog(events: readonly QlogEvent[], binS = 5): QlogSummary {
  if (!(binS > 0)) throw new Error(`binS must be positive, got ${binS}`);
  type Acc = { sent: number; dr: number[]; pace: number[]; cwnd: number[]; srtt: number[]; lost: number };
  const bins = new Map<number, Acc>();
  const at = (timeMs: number): Acc => {
    const key = Math.floor(timeMs / 1000 / binS);
    let acc = bins.get(key);
    if (!acc) bins.set(key, (acc = { sent: 0, dr: [], pace: [], cwnd: [], srtt: [], lost: 0 }));
    return acc;
  };
  const changes: { state: string; atS: number }[] = [];
  let lastS = 0;
  for (const e of events) {
    lastS = Math.max(lastS, e.timeMs / 1000);
    if (e.name === 'quic:packet_sent') at(e.timeMs).sent += num((e.data.raw as { length?: unknown } | undefined)?.length) ?? 0;
    else if (e.name === 'quic:recovery_metrics_updated') {
      const acc = at(e.timeMs);
      const d = e.data;
      push(acc.dr, d.cf_delivery_rate, 8 / 1e6);
      push(acc.pace, d.pacing_rate, 8 / 1e6);
      push(acc.cwnd, d.congestion_window, 1 / 1000);
      push(acc.srtt, d.smoothed_rtt, 1);
      acc.lost += num((d.cf_lost_packets as { delta?: unknown } | undefined)?.delta) ?? 0;
    } else if (e.name === 'quic:congestion_state_updated') {
      const state = e.data.new;
      if (typeof state === 'string') changes.push({ state, atS: e.timeMs / 1000 });
    }
  }
  const intervals = [...bins.entries()].sort((a, b) => a[0] - b[0]).map(([key, a]) => ({
    fromS: key * binS,
    sentMbps: (a.sent * 8) / 1e6 / binS,
    deliveryRateMbps: medianOrNaN(a.dr),
    pacingRateMbps: medianOrNaN(a.pace),
    congestionWindowKB: medianOrNaN(a.cwnd),
    smoothedRttMs: medianOrNaN(a.srtt),
    lostPackets: a.lost,
  }));
  const byState = new Map<string, QlogState>();
  changes.forEach((c, i) => {
    const untilS = i + 1 < changes.length ? changes[i + 1].atS : Math.max(lastS, c.atS);
    const stay = untilS - c.atS;
    const s = byState.get(c.state) ?? { state: c.state, totalS: 0, longestS: 0, longestFromS: c.atS, entries: 0 };
    s.totalS += stay;
    s.entries += 1;
    if (stay > s.longestS) {
      s.longestS = stay;
      s.longestFromS = c.atS;
    }
    byState.set(c.state, s);
  });
  return { intervals, states: [...byState.values()].sort((a, b) => b.totalS - a.totalS) };
}
