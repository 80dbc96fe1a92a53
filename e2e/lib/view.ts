/**
 * Reading what `<holoquic-player>` drew, for end-to-end tests: the WebGL drawing buffer read back
 * right after a render (so the overlay UI and compositing play no part), and each object's MPD
 * bounding box projected to drawing-buffer pixels with the camera that drew it.
 */
import type { Page } from 'playwright-core';

export interface Rect {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

export interface Snapshot {
  width: number;
  height: number;
  /** RGBA, top row first. */
  pixels: Uint8Array;
  /** Projected bounding box per object id, in pixels, top-left origin. */
  boxes: Record<string, Rect>;
  background: [number, number, number];
}

/** Renders one frame of the player element matched by `selector` now and reads it back. */
export async function snapshot(page: Page, selector = 'holoquic-player'): Promise<Snapshot> {
  const raw = await page.evaluate((sel) => {
    const element = document.querySelector(sel) as HTMLElementTagNameMap['holoquic-player'] | null;
    const view = element?.renderer;
    const scene = element?.player?.scene;
    if (!view || !scene) throw new Error(`${sel}: not drawing yet`);
    view.renderOnce();
    const gl = view.renderer.getContext();
    const width = gl.drawingBufferWidth;
    const height = gl.drawingBufferHeight;
    const pixels = new Uint8Array(width * height * 4);
    gl.readPixels(0, 0, width, height, gl.RGBA, gl.UNSIGNED_BYTE, pixels);
    const cssToBuffer = width / view.renderer.domElement.getBoundingClientRect().width;
    const boxes: Record<string, { x0: number; y0: number; x1: number; y1: number }> = {};
    for (const o of scene.objects) {
      const r = { x0: Infinity, y0: Infinity, x1: -Infinity, y1: -Infinity };
      for (const x of [o.bbox.min[0], o.bbox.max[0]]) for (const y of [o.bbox.min[1], o.bbox.max[1]]) for (const z of [o.bbox.min[2], o.bbox.max[2]]) {
        const p = view.project([x, y, z]);
        if (!p) continue;
        r.x0 = Math.min(r.x0, p.x * cssToBuffer);
        r.x1 = Math.max(r.x1, p.x * cssToBuffer);
        r.y0 = Math.min(r.y0, p.y * cssToBuffer);
        r.y1 = Math.max(r.y1, p.y * cssToBuffer);
      }
      boxes[o.id] = r;
    }
    // Binary to text in chunks (String.fromCharCode takes a bounded argument list).
    let text = '';
    for (let i = 0; i < pixels.length; i += 0x8000) text += String.fromCharCode(...pixels.subarray(i, i + 0x8000));
    const background = view.background;
    return { width, height, data: btoa(text), boxes, background };
  }, selector);
  // readPixels is bottom row first: flip to top-left origin like the boxes.
  const bottomUp = Buffer.from(raw.data, 'base64');
  const pixels = new Uint8Array(bottomUp.length);
  const stride = raw.width * 4;
  for (let y = 0; y < raw.height; y++) pixels.set(bottomUp.subarray((raw.height - 1 - y) * stride, (raw.height - y) * stride), y * stride);
  return { width: raw.width, height: raw.height, pixels, boxes: raw.boxes, background: raw.background };
}

/** Whether pixel (x, y) differs from the background colour by more than `tolerance` in some channel. */
export function isDrawn(s: Snapshot, x: number, y: number, tolerance = 12): boolean {
  const i = (y * s.width + x) * 4;
  return Math.abs(s.pixels[i] - s.background[0]) > tolerance || Math.abs(s.pixels[i + 1] - s.background[1]) > tolerance || Math.abs(s.pixels[i + 2] - s.background[2]) > tolerance;
}

export function inRect(r: Rect, x: number, y: number, margin = 0): boolean {
  return x >= r.x0 - margin && x <= r.x1 + margin && y >= r.y0 - margin && y <= r.y1 + margin;
}

/** Drawn pixels inside `r` and the rectangle's pixel area (clipped to the picture). */
export function drawnIn(s: Snapshot, r: Rect): { drawn: number; area: number } {
  let drawn = 0;
  let area = 0;
  for (let y = Math.max(0, Math.floor(r.y0)); y <= Math.min(s.height - 1, Math.ceil(r.y1)); y++) {
    for (let x = Math.max(0, Math.floor(r.x0)); x <= Math.min(s.width - 1, Math.ceil(r.x1)); x++) {
      area++;
      if (isDrawn(s, x, y)) drawn++;
    }
  }
  return { drawn, area };
}

/** Pixels whose colour differs between two snapshots of the same size. */
export function changedPixels(a: Snapshot, b: Snapshot, tolerance = 12): number {
  let changed = 0;
  for (let i = 0; i < a.pixels.length; i += 4) {
    if (Math.abs(a.pixels[i] - b.pixels[i]) > tolerance || Math.abs(a.pixels[i + 1] - b.pixels[i + 1]) > tolerance || Math.abs(a.pixels[i + 2] - b.pixels[i + 2]) > tolerance) changed++;
  }
  return changed;
}
