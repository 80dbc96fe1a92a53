/**
 * Aggregation of QoE experiment runs (docs/qoe.md → "Experiment runner"): one record per run as
 * the runner writes it, reduced to rows a person compares (per mode × loss × trace) and to the
 * series the report plots.
 */
import { PLAYER_MODES } from '../../../src/model/modes';
import type { QoeLog } from '../../../src/model/qoe';
import { type QoeSummary, summarizeQoe } from '../../../src/qoe/schema';
import { USUAL_DELAY_MS, USUAL_QUEUE_MS } from './matrix';
import { type MeanWithInterval, meanWithInterval } from './stats';

/** Counters of one direction of the impairer (holoquic-impair's JSON, docs/qoe.md). */
export interface ImpairerDirection {
  seen: number;
  dropped_loss: number;
  dropped_queue?: number;
  delayed?: number;
  seen_bytes?: number;
  /** nfqueue mode: packets the kernel dropped before handing them over (queue or socket full). */
  kernel_dropped?: { queue_full: number; socket_full: number };
}

export interface RunConfig {
  id: string;
  mode: string;
  /** Configured mean loss rate in percent (Gilbert–Elliott target). */
  lossPct: number;
  /** The `--ge p,r,1-h,1-k` string given to the impairer, empty for no loss. */
  ge: string;
  trace: string;
  traceScale: number;
  pose: string;
  repetition: number;
  durationS: number;
  delayMs: number;
  /** Where the loss applies: origin → client only (`down`, netem on the server's interface) or both ways. */
  lossDirection?: 'down' | 'both';
  /** The origin's congestion control when not its default (loss-tolerant BBR2). */
  congestionControl?: 'cubic' | 'bbr2';
  /** The loss chain ran on a clock, Bad periods of this many ms on average; absent = per packet (netem's semantics). */
  lossBadMs?: number;
  /** The bottleneck's queue as round trips of the path (`queueMsOf`); absent = the usual 100 ms. */
  queueRtts?: number;
  /** Player options given to the page beyond mode and duration (`buffer`, `abr`, `k`, …); absent = defaults. */
  page?: Record<string, string>;
}

/**
 * Whether two runs of the same id were measured under the same settings (network, duration,
 * player options), so one may stand in for the other when a matrix is resumed.
 */
export function sameSettings(a: RunConfig, b: RunConfig): boolean {
  const settings = (r: RunConfig) => JSON.stringify([r.ge, r.traceScale, r.durationS, r.delayMs, r.lossDirection ?? 'down',
    r.congestionControl ?? null, r.lossBadMs ?? null, r.queueRtts ?? null, Object.entries(r.page ?? {}).sort()]);
  return settings(a) === settings(b);
}

/** The buffer target (s) a run gave the player (`page.buffer`), null when it kept the player's default. */
export function bufferOf(run: RunConfig): number | null {
  return run.page?.buffer === undefined ? null : Number(run.page.buffer);
}

/**
 * What a run measured besides its mode and loss level — trace, one-way delay, buffer, queue — as the
 * report names it: the trace alone at the usual 10 ms with the player's buffer, so reports of
 * matrices from before delay and buffer were dimensions read as they did.
 */
export function conditionOf(run: RunConfig): string {
  const buffer = bufferOf(run);
  return [run.trace, run.delayMs === USUAL_DELAY_MS ? '' : `${run.delayMs} ms one-way`, buffer === null ? '' : `${buffer}-s buffer`,
    run.queueRtts === undefined ? '' : `queue ${run.queueRtts} round trips`].filter(Boolean).join(' · ');
}

/** The queue the bottleneck held before it dropped: 100 ms, or `queueRtts` round trips of the path (at least 10 ms). */
export function queueMsOf(run: Pick<RunConfig, 'delayMs' | 'queueRtts'>): number {
  return run.queueRtts === undefined ? USUAL_QUEUE_MS : Math.max(10, Math.round(run.queueRtts * 2 * run.delayMs));
}

/** The cell a run belongs to: condition, loss level and mode. */
export function cellKey(run: RunConfig): string {
  return JSON.stringify([run.trace, run.delayMs, bufferOf(run), run.lossPct, run.mode, ...(run.queueRtts === undefined ? [] : [run.queueRtts])]);
}

/** The origin-side bottleneck queue (`tc -s qdisc` of the rate-shaped interface). */
export interface BottleneckCounters {
  /** Packets the queue passed on. */
  sentPackets: number;
  /** Packets it dropped: congestion loss, before the impairer sees anything. */
  droppedPackets: number;
}

/** How the client (scripts/qoe/client.ts) says the page loaded but its player never started. */
export const PAGE_NEVER_STARTED = 'the page never started the player';

export interface RunRecord {
  run: RunConfig;
  /**
   * The commit measured: the one the app was built from (provenance.ts — the checkout's, marked
   * when the tree had uncommitted changes). Records from before this field take their
   * directory's `commit.txt`.
   */
  commit?: string;
  /** Null when the run failed; `error` says why. */
  qoe: QoeLog | null;
  error?: string;
  /**
   * Why the first attempt did not count when the run was made twice: the runner repeats a run
   * once, and only when nothing of its mode was measured — the page never started the player
   * (client.ts), or the player began on its HTTP/2 fallback in a WebTransport mode (`FELL_BACK`).
   */
  retriedAfter?: string;
  /** Counters per direction: origin → client and client → origin. */
  impairer?: { toClient?: ImpairerDirection; toServer?: ImpairerDirection };
  bottleneck?: BottleneckCounters;
  /** The client namespace's UDP counters: datagrams the kernel dropped before Chromium read them. */
  clientUdp?: UdpCounters;
  /** The origin namespace's TCP counters (the HTTP/2 baseline's sender). */
  originTcp?: TcpCounters;
  /** The origin's /metrics at the end of the run, by name without the `holoquic_` prefix. */
  origin?: Record<string, number>;
}

/** UDP counters of a network namespace (`/proc/net/snmp`). */
export interface UdpCounters {
  inDatagrams: number;
  /** Dropped because the socket's receive buffer was full (the reader too slow). */
  rcvbufErrors: number;
  inErrors: number;
}

/**
 * Reads a `/proc/net/snmp`-style table: a header line and a value line, both starting with
 * `prefix` (e.g. `Udp:`), as a name → value map (undefined when the pair is missing).
 */
function procTable(text: string, prefix: string): Map<string, number> | undefined {
  const lines = text.split('\n').filter((l) => l.startsWith(`${prefix} `));
  if (lines.length < 2) return undefined;
  const names = lines[0].split(/\s+/).slice(1), values = lines[1].split(/\s+/).slice(1).map(Number);
  return new Map(names.map((name, i) => [name, values[i]]));
}

function allFinite<T extends Record<string, number>>(counters: T): T | undefined {
  return Object.values(counters).every((v) => Number.isFinite(v)) ? counters : undefined;
}

/** Reads the `Udp:` table of /proc/net/snmp. */
export function parseUdpSnmp(text: string): UdpCounters | undefined {
  const udp = procTable(text, 'Udp:');
  if (!udp) return undefined;
  return allFinite({ inDatagrams: udp.get('InDatagrams') ?? NaN, rcvbufErrors: udp.get('RcvbufErrors') ?? NaN, inErrors: udp.get('InErrors') ?? NaN });
}

/** TCP counters of a network namespace (`/proc/net/snmp` and `/proc/net/netstat`). */
export interface TcpCounters {
  outSegs: number;
  retransSegs: number;
  /** Retransmission timeouts: each one stalls the connection for its (doubling) RTO. */
  timeouts: number;
  /** Tail loss probes sent. */
  lossProbes: number;
}

/** Reads the `Tcp:` table of /proc/net/snmp and the `TcpExt:` one of /proc/net/netstat (concatenated). */
export function parseTcpCounters(text: string): TcpCounters | undefined {
  const tcp = procTable(text, 'Tcp:'), ext = procTable(text, 'TcpExt:');
  if (!tcp || !ext) return undefined;
  return allFinite({
    outSegs: tcp.get('OutSegs') ?? NaN, retransSegs: tcp.get('RetransSegs') ?? NaN,
    timeouts: ext.get('TCPTimeouts') ?? NaN, lossProbes: ext.get('TCPLossProbes') ?? NaN,
  });
}

/** Reads the first qdisc's `Sent … pkt (dropped …` line of `tc -s qdisc show`. */
export function parseQdiscStats(text: string): BottleneckCounters | undefined {
  const m = /Sent \d+ bytes (\d+) pkt \(dropped (\d+)/.exec(text);
  return m ? { sentPackets: Number(m[1]), droppedPackets: Number(m[2]) } : undefined;
}

/** Reads the samples of a Prometheus text exposition (`name value` lines; comments skipped). */
export function parsePrometheusText(text: string, prefix = 'holoquic_'): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)\s+(\S+)$/.exec(line.trim());
    if (!m || !Number.isFinite(Number(m[2]))) continue;
    out[m[1].startsWith(prefix) ? m[1].slice(prefix.length) : m[1]] = Number(m[2]);
  }
  return out;
}

export interface RunRow {
  run: RunConfig;
  ok: boolean;
  error?: string;
  summary?: QoeSummary;
  /** Loss the impairer actually applied to origin → client packets, in percent (NaN if unknown). */
  measuredLossPct: number;
  /** The FEC overhead the origin paid over the run, (symbols sent − source) / source (NaN if unknown). */
  originFecOverhead: number;
  /** Packets the bottleneck queue dropped, in percent of those offered to it (NaN if unknown). */
  queueDropPct: number;
  /** The origin namespace's TCP counters, when the run recorded them. */
  originTcp?: TcpCounters;
  /** The commit the run measured, when known. */
  commit?: string;
}

export function queueDropPct(bottleneck: BottleneckCounters | undefined): number {
  const offered = bottleneck ? bottleneck.sentPackets + bottleneck.droppedPackets : 0;
  return offered > 0 ? (100 * bottleneck!.droppedPackets) / offered : NaN;
}

/**
 * (symbols sent − source symbols) / source symbols from the origin's counters: every symbol it
 * sent, repair on demand and the requests later given up included. The player's records see
 * only what the client learnt (SENT and END messages), which a cancelled request never gets.
 */
export function originFecOverhead(origin: Record<string, number> | undefined): number {
  const source = origin?.source_symbols_total ?? 0, sent = origin?.symbols_sent_total ?? NaN;
  return source > 0 ? (sent - source) / source : NaN;
}

/** Loss on the impaired hop: the model's drops plus any the kernel made before the impairer saw the packet. */
export function measuredLossPct(direction: ImpairerDirection | undefined): number {
  const kernel = direction?.kernel_dropped ? direction.kernel_dropped.queue_full + direction.kernel_dropped.socket_full : 0;
  if (!direction || direction.seen + kernel === 0) return NaN;
  return (100 * (direction.dropped_loss + kernel)) / (direction.seen + kernel);
}

/** Why a run of a WebTransport mode that began on the player's HTTP/2 fallback stands for nothing. */
export const FELL_BACK = 'fell back to HTTP/2: not a run of its mode';

/**
 * Whether the player began on its HTTP/2 fallback although the mode asks for WebTransport: the
 * page's session did not open (docs/player.md → "Failover and fallback"), so the run measured the
 * fallback, not the mode — chance, not a property of the mode, so the runner makes it once more.
 */
export function startedOnFallback(mode: string, log: QoeLog): boolean {
  return mode !== 'h2' && log.config.transport !== 'webtransport';
}

/**
 * Whether `--resume` keeps an earlier record of a run instead of making it again: the record can
 * stand for its cell (`unusableReason`) and was made with the settings the plan now asks for.
 */
export function keptOnResume(earlier: RunRecord, config: RunConfig): boolean {
  return unusableReason(earlier) === undefined && sameSettings(earlier.run, config);
}

/**
 * Why a run cannot stand for its cell (undefined when it can). A failed page can still hand over
 * a log — empty, cut short, or of another transport — which would read as a run without freezes.
 */
export function unusableReason(record: RunRecord): string | undefined {
  const log = record.qoe;
  if (!log) return record.error ?? 'no QoE log';
  if (record.error) return record.error;
  if (startedOnFallback(record.run.mode, log)) return FELL_BACK;
  if (log.segments.length === 0 || !Number.isFinite(log.playback.startupS ?? NaN)) return 'playback never started';
  // The player stops `durationS` after its session starts, so a whole log spans about that long.
  if (log.playback.wallS < 0.95 * record.run.durationS) return `the log ends after ${log.playback.wallS.toFixed(1)} s of ${record.run.durationS} s`;
  return undefined;
}

export function toRow(record: RunRecord): RunRow {
  const measured = measuredLossPct(record.impairer?.toClient);
  const queue = queueDropPct(record.bottleneck);
  const counters = {
    measuredLossPct: measured, queueDropPct: queue, originFecOverhead: originFecOverhead(record.origin), originTcp: record.originTcp,
    commit: record.commit,
  };
  const unusable = unusableReason(record);
  if (unusable !== undefined) return { run: record.run, ok: false, error: unusable, ...counters };
  return { run: record.run, ok: true, summary: summarizeQoe(record.qoe!), ...counters };
}

/** The runs of one experiment directory, as a combined report takes them. */
export interface RunSource {
  /** How the report names the source (its directory). */
  label: string;
  /** The modes taken from it; all when absent. */
  modes?: readonly string[];
  records: readonly RunRecord[];
}

/** The records of the source's chosen modes. */
export function takenFrom(source: RunSource): RunRecord[] {
  return source.records.filter((r) => !source.modes || source.modes.includes(r.run.mode));
}

/**
 * The runs of several experiments as one matrix, e.g. one mode's column measured again at a later
 * commit beside the other modes' runs. A cell (trace × loss × mode) found in two sources is an
 * error: its mean would pool two versions of the code, which is what the per-source mode lists
 * are there to prevent.
 */
export function combineSources(sources: readonly RunSource[]): RunRecord[] {
  const cellSource = new Map<string, string>();
  const combined: RunRecord[] = [];
  for (const source of sources) {
    const taken = takenFrom(source);
    if (taken.length === 0) throw new Error(`${source.label}: no runs${source.modes ? ` of ${source.modes.join(', ')}` : ''}`);
    for (const record of taken) {
      const { lossPct, mode } = record.run;
      const key = cellKey(record.run);
      const earlier = cellSource.get(key);
      if (earlier !== undefined && earlier !== source.label) {
        throw new Error(`${conditionOf(record.run)} at ${lossPct} % loss, ${mode}: runs in both ${earlier} and ${source.label} ` +
          '(choose the modes taken from each: DIR:mode,mode)');
      }
      cellSource.set(key, source.label);
      combined.push(record);
    }
  }
  return combined;
}

/** Mean, sample standard deviation and 95 % Student t interval over repetitions; NaN values are left out. */
export type Stat = MeanWithInterval;
export const stat = meanWithInterval;

/** One cell of the comparison: a mode at a loss level on a trace, over its repetitions. */
export interface Cell {
  mode: string;
  lossPct: number;
  trace: string;
  delayMs: number;
  /** The player's buffer target, null for its default. */
  bufferS: number | null;
  /** The bottleneck's queue in round trips of the path, null for the usual 100 ms. */
  queueRtts: number | null;
  /** Trace, delay, buffer and queue as the report names them (`conditionOf`). */
  condition: string;
  runs: number;
  failed: number;
  freezeCount: Stat;
  freezeTotalS: Stat;
  meanQuality: Stat;
  meanVisibleQuality: Stat;
  /** Quality shown weighted by the area seen at playout (`QoeSummary.meanSeenQuality`). */
  meanSeenQuality: Stat;
  throughputMbps: Stat;
  busyGoodputMbps: Stat;
  /**
   * Object bytes received per second of the run (Mbit/s): what the link gave the player, as its
   * choices asked for it — unlike busy goodput, no request round trip is in it.
   */
  deliveredMbps: Stat;
  onTimeRatio: Stat;
  visibleOnTimeRatio: Stat;
  skippedShare: Stat;
  decodeSuccess: Stat;
  datagramRecovery: Stat;
  datagramDecoded: Stat;
  fecOverhead: Stat;
  /** From the origin's counters (`originFecOverhead`). */
  originFecOverhead: Stat;
  startupS: Stat;
  qualitySwitches: Stat;
  /** Share of received bytes that never reached the screen. */
  wastedShare: Stat;
  measuredLossPct: Stat;
  queueDropPct: Stat;
  /** Every per-segment throughput sample of every repetition (Mbit/s), for CDFs. */
  throughputSamplesMbps: number[];
}

export function aggregate(rows: readonly RunRow[]): Cell[] {
  const groups = new Map<string, RunRow[]>();
  for (const row of rows) {
    const key = cellKey(row.run);
    groups.set(key, [...(groups.get(key) ?? []), row]);
  }
  const cells: Cell[] = [];
  for (const group of groups.values()) {
    const ok = group.filter((r) => r.ok && r.summary);
    const pick = (f: (s: QoeSummary) => number) => stat(ok.map((r) => f(r.summary!)));
    const { mode, lossPct, trace, delayMs } = group[0].run;
    cells.push({
      mode, lossPct, trace, delayMs, bufferS: bufferOf(group[0].run), queueRtts: group[0].run.queueRtts ?? null, condition: conditionOf(group[0].run),
      runs: group.length,
      failed: group.length - ok.length,
      freezeCount: pick((s) => s.freezeCount),
      freezeTotalS: pick((s) => s.freezeTotalS),
      meanQuality: pick((s) => s.meanQuality),
      meanVisibleQuality: pick((s) => s.meanVisibleQuality),
      meanSeenQuality: pick((s) => s.meanSeenQuality),
      throughputMbps: pick((s) => s.meanThroughputBps / 1e6),
      busyGoodputMbps: pick((s) => s.busyGoodputBps / 1e6),
      deliveredMbps: stat(ok.map((r) => (r.summary!.bytesReceived * 8) / r.run.durationS / 1e6)),
      onTimeRatio: pick((s) => s.onTimeRatio),
      visibleOnTimeRatio: pick((s) => s.visibleOnTimeRatio),
      skippedShare: pick((s) => s.skippedShare),
      decodeSuccess: pick((s) => s.decodeSuccess),
      datagramRecovery: pick((s) => s.datagramRecovery),
      datagramDecoded: pick((s) => s.datagramDecoded),
      fecOverhead: pick((s) => s.fecOverhead),
      originFecOverhead: stat(ok.map((r) => r.originFecOverhead)),
      startupS: pick((s) => s.startupS),
      qualitySwitches: pick((s) => s.qualitySwitches),
      wastedShare: pick((s) => (s.bytesReceived > 0 ? s.bytesWasted / s.bytesReceived : NaN)),
      measuredLossPct: stat(group.map((r) => r.measuredLossPct)),
      queueDropPct: stat(group.map((r) => r.queueDropPct)),
      throughputSamplesMbps: ok.flatMap((r) => r.summary!.throughputBps.map((b) => b / 1e6)),
    });
  }
  return cells.sort((a, b) => a.trace.localeCompare(b.trace) || a.delayMs - b.delayMs || (b.bufferS ?? Infinity) - (a.bufferS ?? Infinity) ||
    a.lossPct - b.lossPct || compareModes(a.mode, b.mode));
}

const MODE_ORDER: readonly string[] = PLAYER_MODES;

/** The delivery modes in the order tables show them: baseline first, then by how much is sent unreliably. */
export function compareModes(a: string, b: string): number {
  const rank = (m: string) => (MODE_ORDER.includes(m) ? MODE_ORDER.indexOf(m) : MODE_ORDER.length);
  return rank(a) - rank(b) || a.localeCompare(b);
}

/** Empirical CDF points (x ascending, y in (0, 1]). */
export function cdf(samples: readonly number[]): Array<[number, number]> {
  const sorted = samples.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  return sorted.map((x, i) => [x, (i + 1) / sorted.length]);
}
