/**
 * The demo app's live statistics panel: session numbers (buffer, throughput, loss, FEC overhead,
 * decode and render rates, freezes), one row per object (rank, quality, delivery, points) and
 * small charts of throughput, buffer and render rate. It reads `getStats()` on its own timer;
 * the player never pushes to it.
 */
import type { HoloquicStats } from './component';
import { formatNumber, LiveChart } from './liveChart';

const STYLE = `
.hq-stats { position: absolute; z-index: 1; top: 8px; right: 8px; width: 260px; padding: 8px 10px; border-radius: 8px;
  background: #000b; color: #e6edf3; font: 12px/1.45 system-ui, sans-serif; pointer-events: none; }
.hq-stats table { width: 100%; border-collapse: collapse; }
.hq-stats td { padding: 0 2px; }
.hq-stats td:last-child { text-align: right; font-variant-numeric: tabular-nums; }
.hq-stats .objects td { text-align: right; }
.hq-stats .objects td:first-child { text-align: left; }
.hq-stats .objects th { font-weight: 600; text-align: right; color: #9fb0c0; }
.hq-stats .objects th:first-child { text-align: left; }
.hq-stats .chart { display: block; margin-top: 4px; width: 240px; height: 48px; }
.hq-stats .stale { color: #ffb86b; }
`;

const pct = (v: number | null) => (v === null ? '–' : `${(v * 100).toFixed(1)} %`);

export class StatsOverlay {
  readonly element: HTMLDivElement;
  private readonly summary: HTMLTableElement;
  private readonly objects: HTMLTableElement;
  private readonly charts = {
    throughput: new LiveChart('throughput', 'Mbit/s', '#5ec8ff'),
    buffer: new LiveChart('buffer', 's', '#8be28b'),
    render: new LiveChart('render', 'fps', '#f3c86b'),
  };
  private timer: ReturnType<typeof setInterval> | null = null;
  /** Decoded-frame counter at the previous update, for frames decoded per second. */
  private lastDecoded: { frames: number; atMs: number } | null = null;

  constructor(private readonly read: () => HoloquicStats | null) {
    const style = document.createElement('style');
    style.textContent = STYLE;
    document.head.append(style);
    this.element = document.createElement('div');
    this.element.className = 'hq-stats';
    this.summary = document.createElement('table');
    this.objects = document.createElement('table');
    this.objects.className = 'objects';
    this.element.append(this.summary, this.objects, ...Object.values(this.charts).map((c) => c.canvas));
  }

  /** Refreshes every `intervalMs` until `stop()`. */
  start(intervalMs = 500): void {
    this.stop();
    this.timer = setInterval(() => this.update(), intervalMs);
    this.update();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** Frames the decode workers finished per second since the last update, and failures. */
  private decodeRate(s: HoloquicStats): string {
    if (!s.decoder) return '–';
    const now = performance.now();
    const last = this.lastDecoded;
    this.lastDecoded = { frames: s.decoder.frames, atMs: now };
    const failures = s.decoder.failures ? `, ${s.decoder.failures} failed` : '';
    if (!last || now <= last.atMs) return `${s.decoder.frames}${failures}`;
    return `${(((s.decoder.frames - last.frames) * 1000) / (now - last.atMs)).toFixed(0)} / s${failures}`;
  }

  update(): void {
    const s = this.read();
    if (!s) return;
    const r = s.render;
    const rows: [string, string][] = [
      ['state', s.state],
      ['mode / transport', `${s.mode} / ${s.transport ?? '–'}`],
      ['played', `${s.playedS.toFixed(1)} s`],
      ['buffer', `${s.bufferS.toFixed(2)} s`],
      ['throughput', s.throughputBps === null ? '–' : `${formatNumber(s.throughputBps / 1e6)} Mbit/s`],
      ['loss (mean burst)', `${pct(s.lossRate)} (${s.meanLossBurst.toFixed(1)})`],
      ['RTT (min)', `${(s.rttS * 1000).toFixed(0)} ms (${(s.minRttS * 1000).toFixed(0)} ms)${s.rttSource === 'responses' ? ', from responses' : ''}`],
      ['FEC overhead', pct(s.fecOverhead)],
      ['decode', s.meanDecodeMs === null ? '–' : `${s.meanDecodeMs.toFixed(0)} ms / segment`],
      ['decoded frames', this.decodeRate(s)],
      ['worker memory', workerMemory(s)],
      ['content / render', r ? `${r.contentFps.toFixed(0)} / ${r.renderFps.toFixed(0)} fps` : 'not drawing'],
      ['points drawn', r ? r.pointsDrawn.toLocaleString('en') : '–'],
      ['GPU reconstruction', r ? `${r.gpuReconstructed} of ${s.objects.length} objects` : '–'],
      ['freezes', `${s.freezes} (${s.freezeTotalS.toFixed(1)} s)`],
    ];
    if (s.fallbackReason) rows.push(['fallback', s.fallbackReason]);
    if (s.endpoint) rows.push(['endpoint', s.endpoint]);
    if (s.switches > 0) rows.push(['path switches', `${s.switches} (last: ${s.lastSwitchReason})`]);
    this.summary.replaceChildren(...rows.map(([k, v]) => row([k, v])));
    this.objects.replaceChildren(
      row(['object', 'rank', 'quality', 'delivery', 'points'], 'th'),
      ...[...s.objects].sort((a, b) => a.rank - b.rank).map((o) => {
        const tr = row([o.id, String(o.rank), o.quality < 0 ? '–' : `Q${o.quality}`, o.delivery ?? '–', o.points ? `${(o.points / 1000).toFixed(0)}k` : '–']);
        if (o.stale) tr.className = 'stale';
        return tr;
      }),
    );
    this.charts.throughput.push(s.throughputBps === null ? null : s.throughputBps / 1e6);
    this.charts.buffer.push(s.bufferS);
    this.charts.render.push(r ? r.renderFps : null);
  }
}

function row(cells: string[], tag: 'td' | 'th' = 'td'): HTMLTableRowElement {
  const tr = document.createElement('tr');
  for (const text of cells) {
    const cell = document.createElement(tag);
    cell.textContent = text;
    tr.append(cell);
  }
  return tr;
}

/** The decode workers' and the FEC worker's wasm memory, in MB. */
function workerMemory(s: HoloquicStats): string {
  const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MB`;
  const decode = s.decoder ? `decode ${mb(s.decoder.workerMemoryBytes)}` : 'decode –';
  return s.fecWorkerMemoryBytes === null ? decode : `${decode} · FEC ${mb(s.fecWorkerMemoryBytes)}`;
}
