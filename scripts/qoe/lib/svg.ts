/**
 * Minimal SVG charts for the QoE report: a line/step chart and a grouped bar chart. Self-contained
 * strings (no script, no external fonts) so the report is one static HTML file.
 */

export interface Series {
  name: string;
  points: Array<[number, number]>;
}

export interface LineChartOptions {
  title: string;
  xLabel: string;
  yLabel: string;
  series: Series[];
  /** Draw as a staircase (CDFs, quality over time). */
  step?: boolean;
  yMin?: number;
  yMax?: number;
  width?: number;
  height?: number;
}

export interface BarChartOptions {
  title: string;
  yLabel: string;
  /** Category labels along the x axis (e.g. loss levels). */
  categories: string[];
  /** One bar per series inside each category; NaN draws nothing. `intervals`: half-widths drawn as whiskers (NaN: none). */
  series: Array<{ name: string; values: number[]; intervals?: number[] }>;
  width?: number;
  height?: number;
}

const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf'];
const MARGIN = { left: 58, right: 150, top: 28, bottom: 44 };

/** Stable colour per series name, so a mode has the same colour in every figure. */
export function colourFor(name: string, names: readonly string[]): string {
  const i = names.indexOf(name);
  return PALETTE[(i < 0 ? 0 : i) % PALETTE.length];
}

export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** About five round tick values covering [lo, hi]. */
export function ticks(lo: number, hi: number, count = 5): number[] {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / count;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * magnitude).find((s) => s >= raw)!;
  const out: number[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(+v.toFixed(10));
  return out;
}

function fmt(v: number): string {
  return Math.abs(v) >= 100 || Number.isInteger(v) ? String(Math.round(v)) : v.toPrecision(3).replace(/\.?0+$/, '');
}

function frame(title: string, width: number, height: number, body: string): string {
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11">` +
    `<text x="${width / 2}" y="16" text-anchor="middle" font-size="13" font-weight="bold">${escapeXml(title)}</text>${body}</svg>`;
}

function axes(x0: number, y0: number, w: number, h: number, xTicks: Array<[number, string]>, yTicks: Array<[number, string]>, xLabel: string, yLabel: string): string {
  let s = `<rect x="${x0}" y="${y0}" width="${w}" height="${h}" fill="none" stroke="#444"/>`;
  for (const [px, label] of xTicks) {
    s += `<line x1="${px}" y1="${y0 + h}" x2="${px}" y2="${y0 + h + 4}" stroke="#444"/><text x="${px}" y="${y0 + h + 16}" text-anchor="middle">${escapeXml(label)}</text>`;
  }
  for (const [py, label] of yTicks) {
    s += `<line x1="${x0}" y1="${py}" x2="${x0 + w}" y2="${py}" stroke="#ddd"/><text x="${x0 - 6}" y="${py + 4}" text-anchor="end">${escapeXml(label)}</text>`;
  }
  s += `<text x="${x0 + w / 2}" y="${y0 + h + 34}" text-anchor="middle">${escapeXml(xLabel)}</text>`;
  s += `<text transform="translate(14 ${y0 + h / 2}) rotate(-90)" text-anchor="middle">${escapeXml(yLabel)}</text>`;
  return s;
}

function legend(names: string[], x: number, y: number): string {
  return names.map((n, i) => `<rect x="${x}" y="${y + i * 16}" width="12" height="10" fill="${colourFor(n, names)}"/>` +
    `<text x="${x + 16}" y="${y + i * 16 + 9}">${escapeXml(n)}</text>`).join('');
}

export function lineChart(o: LineChartOptions): string {
  const width = o.width ?? 560, height = o.height ?? 300;
  const w = width - MARGIN.left - MARGIN.right, h = height - MARGIN.top - MARGIN.bottom;
  const all = o.series.flatMap((s) => s.points).filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
  if (all.length === 0) return frame(o.title, width, height, `<text x="${width / 2}" y="${height / 2}" text-anchor="middle">no data</text>`);
  const xs = all.map((p) => p[0]), ys = all.map((p) => p[1]);
  let xLo = Math.min(...xs), xHi = Math.max(...xs);
  let yLo = o.yMin ?? Math.min(0, ...ys), yHi = o.yMax ?? Math.max(...ys);
  if (xHi === xLo) { xLo -= 1; xHi += 1; }
  if (yHi === yLo) yHi = yLo + 1;
  const px = (x: number) => MARGIN.left + ((x - xLo) / (xHi - xLo)) * w;
  const py = (y: number) => MARGIN.top + h - ((y - yLo) / (yHi - yLo)) * h;
  let body = axes(MARGIN.left, MARGIN.top, w, h,
    ticks(xLo, xHi).map((t) => [px(t), fmt(t)]), ticks(yLo, yHi).map((t) => [py(t), fmt(t)]), o.xLabel, o.yLabel);
  const names = o.series.map((s) => s.name);
  for (const s of o.series) {
    const pts = s.points.filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
    if (pts.length === 0) continue;
    let d = `M${px(pts[0][0]).toFixed(1)},${py(pts[0][1]).toFixed(1)}`;
    for (let i = 1; i < pts.length; i++) {
      const x = px(pts[i][0]).toFixed(1), y = py(pts[i][1]).toFixed(1);
      d += o.step ? `H${x}V${y}` : `L${x},${y}`;
    }
    body += `<path d="${d}" fill="none" stroke="${colourFor(s.name, names)}" stroke-width="1.8"/>`;
  }
  body += legend(names, MARGIN.left + w + 12, MARGIN.top);
  return frame(o.title, width, height, body);
}

export function barChart(o: BarChartOptions): string {
  const width = o.width ?? 560, height = o.height ?? 300;
  const w = width - MARGIN.left - MARGIN.right, h = height - MARGIN.top - MARGIN.bottom;
  const tops = o.series.flatMap((s) => s.values.map((v, i) => v + (Number.isFinite(s.intervals?.[i]) ? s.intervals![i] : 0)));
  const values = tops.filter((v) => Number.isFinite(v));
  const yHi = Math.max(1e-9, ...values);
  const py = (y: number) => MARGIN.top + h - (y / yHi) * h;
  const groupW = w / Math.max(1, o.categories.length);
  const barW = (groupW * 0.8) / Math.max(1, o.series.length);
  let body = axes(MARGIN.left, MARGIN.top, w, h,
    o.categories.map((c, i) => [MARGIN.left + groupW * (i + 0.5), c]), ticks(0, yHi).map((t) => [py(t), fmt(t)]), '', o.yLabel);
  const names = o.series.map((s) => s.name);
  o.series.forEach((s, si) => {
    s.values.forEach((v, ci) => {
      if (!Number.isFinite(v)) return;
      const x = MARGIN.left + groupW * ci + groupW * 0.1 + barW * si;
      const half = s.intervals?.[ci] ?? NaN;
      const label = `${s.name} ${o.categories[ci]}: ${fmt(v)}${Number.isFinite(half) ? ` ± ${fmt(half)}` : ''}`;
      body += `<rect x="${x.toFixed(1)}" y="${py(v).toFixed(1)}" width="${barW.toFixed(1)}" height="${(MARGIN.top + h - py(v)).toFixed(1)}" fill="${colourFor(s.name, names)}"><title>${escapeXml(label)}</title></rect>`;
      if (Number.isFinite(half) && half > 0) {
        // The whisker: the interval around the mean, clipped at the axis.
        const cx = (x + barW / 2).toFixed(1), top = py(v + half).toFixed(1), bottom = py(Math.max(0, v - half)).toFixed(1);
        body += `<path class="ci" d="M${cx},${top}V${bottom}M${(x + barW * 0.25).toFixed(1)},${top}h${(barW / 2).toFixed(1)}M${(x + barW * 0.25).toFixed(1)},${bottom}h${(barW / 2).toFixed(1)}" stroke="#222" fill="none"/>`;
      }
    });
  });
  body += legend(names, MARGIN.left + w + 12, MARGIN.top);
  return frame(o.title, width, height, body);
}
