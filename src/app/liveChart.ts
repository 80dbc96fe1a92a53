/**
 * A small live line chart on a canvas: the last `capacity` samples of one quantity, redrawn on
 * each push. Samples live in a fixed ring, so a chart costs nothing per sample but a redraw.
 */
export class LiveChart {
  readonly canvas: HTMLCanvasElement;
  private readonly values: Float64Array;
  private next = 0;
  private filled = 0;

  constructor(private readonly label: string, private readonly unit: string, private readonly color = '#5ec8ff', capacity = 120) {
    this.values = new Float64Array(capacity);
    this.canvas = document.createElement('canvas');
    this.canvas.width = 240;
    this.canvas.height = 48;
    this.canvas.className = 'chart';
  }

  push(value: number | null): void {
    this.values[this.next] = value ?? NaN;
    this.next = (this.next + 1) % this.values.length;
    this.filled = Math.min(this.filled + 1, this.values.length);
    this.draw();
  }

  private draw(): void {
    const g = this.canvas.getContext('2d');
    if (!g) return;
    const { width, height } = this.canvas;
    g.clearRect(0, 0, width, height);
    let max = 0;
    for (let i = 0; i < this.filled; i++) if (this.values[i] > max) max = this.values[i];
    const top = max > 0 ? max * 1.15 : 1;
    g.strokeStyle = this.color;
    g.lineWidth = 1.5;
    g.beginPath();
    let started = false;
    const first = (this.next - this.filled + this.values.length) % this.values.length;
    for (let i = 0; i < this.filled; i++) {
      const v = this.values[(first + i) % this.values.length];
      if (!Number.isFinite(v)) {
        started = false;
        continue;
      }
      const x = (i / (this.values.length - 1)) * width;
      const y = height - 2 - (v / top) * (height - 14);
      if (started) g.lineTo(x, y);
      else g.moveTo(x, y);
      started = true;
    }
    g.stroke();
    const last = this.values[(this.next - 1 + this.values.length) % this.values.length];
    g.fillStyle = '#cfd8e3';
    g.font = '11px system-ui, sans-serif';
    g.fillText(`${this.label}: ${Number.isFinite(last) ? formatNumber(last) : '–'} ${this.unit}   (max ${formatNumber(max)})`, 4, 11);
  }
}

export function formatNumber(v: number): string {
  if (!Number.isFinite(v)) return '–';
  if (Math.abs(v) >= 100) return v.toFixed(0);
  if (Math.abs(v) >= 10) return v.toFixed(1);
  return v.toFixed(2);
}
