import { describe, expect, it, vi } from 'vitest';
import { framePoints } from '../model/frames';
import type { FromWorker, ToWorker } from './protocol';
import { DecoderPool, defaultPoolSize } from './pool';

/** A stand-in for a decode worker: records requests, replies when told. */
class ScriptedWorker {
  onmessage: ((event: MessageEvent<FromWorker>) => void) | null = null;
  onerror: ((event: ErrorEvent) => void) | null = null;
  requests: ToWorker[] = [];
  terminated = false;
  postMessage(message: ToWorker): void {
    this.requests.push(message);
  }
  terminate(): void {
    this.terminated = true;
  }
  /** The wasm memory this worker reports with its answers. */
  memoryBytes = 0;
  decoded(id: number, points: number[]): void {
    const frames = points.map((count) => ({ count, positions: new Int16Array(count * 3), colors: new Uint8Array(count * 3) }));
    this.onmessage!({ data: { type: 'decoded', id, memoryBytes: this.memoryBytes, frames, timing: { totalMs: 10, parseMs: 1, frameMs: points.map(() => 2), pictureMs: 1, videoDecoder: 'webcodecs' } } } as MessageEvent<FromWorker>);
  }
  failed(id: number, message: string, worker?: 'unloadable' | 'crashed'): void {
    this.onmessage!({ data: { type: 'failed', id, memoryBytes: this.memoryBytes, message, worker } } as MessageEvent<FromWorker>);
  }
}

function pool(size: number, maxQueued: number, timeoutMs?: number) {
  const workers: ScriptedWorker[] = [];
  const p = new DecoderPool({
    size, maxQueued, timeoutMs,
    createWorker: () => {
      const w = new ScriptedWorker();
      workers.push(w);
      return w as unknown as Worker;
    },
  });
  return { p, workers };
}

const job = (segment: number) => ({ objectId: 'a', segment, quality: 0, bytes: Uint8Array.of(segment) });

describe('DecoderPool', () => {
  it('sends its atlas size limit with every segment', () => {
    const worker = new ScriptedWorker();
    const p = new DecoderPool({ size: 1, maxAtlasSize: 2048, createWorker: () => worker as unknown as Worker });
    void p.decode(job(0)).catch(() => undefined);
    expect(worker.requests[0]).toMatchObject({ type: 'decode', maxAtlasSize: 2048 });
    p.close();
  });

  it('tells every segment where the optional HEVC module is: the bundled files, others, or none', () => {
    const sent = (options: ConstructorParameters<typeof DecoderPool>[0]) => {
      const worker = new ScriptedWorker();
      const p = new DecoderPool({ size: 1, ...options, createWorker: () => worker as unknown as Worker });
      void p.decode(job(0)).catch(() => undefined);
      p.close();
      return worker.requests[0].hevcModule;
    };
    const bundled = sent({});
    expect(bundled?.moduleUrl).toMatch(/vpcc-hevc\.mjs/);
    expect(bundled?.wasmUrl).toMatch(/vpcc-hevc\.wasm/);
    expect(bundled?.licenceUrl).toMatch(/vpcc-hevc\.LICENSE\.txt/);
    const elsewhere = { moduleUrl: 'https://cdn.example/vpcc-hevc.mjs', wasmUrl: 'https://cdn.example/vpcc-hevc.wasm' };
    expect(sent({ hevcModule: elsewhere })).toEqual(elsewhere);
    expect(sent({ hevcModule: null })).toBeUndefined();
  });

  it('runs one segment per worker and queues the rest in order', async () => {
    const { p, workers } = pool(2, 4);
    const results = [0, 1, 2].map((s) => p.decode(job(s)));
    expect(workers.map((w) => w.requests.length)).toEqual([1, 1]);
    expect(p.queued).toBe(1);
    workers[0].decoded(workers[0].requests[0].id, [5, 6]);
    expect((await results[0]).frames.map((f) => framePoints(f))).toEqual([5, 6]);
    // The freed worker took the queued segment.
    expect(workers[0].requests[1].bytes).toEqual(Uint8Array.of(2));
    workers[1].decoded(workers[1].requests[0].id, [7]);
    workers[0].decoded(workers[0].requests[1].id, [8]);
    expect((await results[2]).frames.map(framePoints)[0]).toBe(8);
    expect(p.stats()).toMatchObject({ segments: 3, frames: 4, failures: 0, meanFrameMs: 2 });
  });

  it('gives a free worker the waiting segment due first, not the one that arrived first', async () => {
    const { p, workers } = pool(1, 4);
    const worker = workers[0];
    // A backlog after an outage: the worker is busy, and three segments arrive out of due order.
    const all = [p.decode({ ...job(0), dueAt: 10 })];
    for (const [segment, dueAt] of [[1, 13], [2, 11], [3, 12]]) all.push(p.decode({ ...job(segment), dueAt }));
    expect(p.queued).toBe(3);
    for (let n = 0; n < 4; n++) worker.decoded(worker.requests[n].id, [n]);
    await Promise.all(all);
    expect(worker.requests.map((r) => r.bytes[0])).toEqual([0, 2, 3, 1]);
    // The due time orders the queue only: the worker is not told it.
    expect(worker.requests[1]).not.toHaveProperty('dueAt');
  });

  it('keeps arrival order among equal due times, and puts jobs without one last', async () => {
    const { p, workers } = pool(1, 8);
    const worker = workers[0];
    const all = [p.decode({ ...job(0), dueAt: 5 })];
    all.push(p.decode(job(1)), p.decode({ ...job(2), dueAt: 7 }), p.decode({ ...job(3), dueAt: 7 }));
    all.push(p.decode({ ...job(4), dueAt: NaN }), p.decode({ ...job(5), dueAt: 6 }), p.decode({ ...job(6), dueAt: 7 }));
    for (let n = 0; n < 7; n++) worker.decoded(worker.requests[n].id, [n]);
    await Promise.all(all);
    expect(worker.requests.map((r) => r.bytes[0])).toEqual([0, 5, 2, 3, 6, 1, 4]);
  });

  it('rejects at once when the queue is full (back-pressure), and keeps working', async () => {
    const { p, workers } = pool(1, 1);
    const running = p.decode(job(0));
    const waiting = p.decode(job(1));
    await expect(p.decode(job(2))).rejects.toThrow(/decoder busy: 1 segments already waiting/);
    workers[0].decoded(workers[0].requests[0].id, [1]);
    workers[0].decoded(workers[0].requests[1].id, [2]);
    await expect(running).resolves.toBeDefined();
    await expect(waiting).resolves.toBeDefined();
    expect(p.stats().rejectedBusy).toBe(1);
  });

  it('withdraws a waiting job when its signal aborts; a running one finishes', async () => {
    const { p, workers } = pool(1, 4);
    const running = new AbortController();
    const waiting = new AbortController();
    const a = p.decode({ ...job(0), signal: running.signal });
    const b = p.decode({ ...job(1), signal: waiting.signal });
    const c = p.decode(job(2));
    running.abort();
    waiting.abort();
    await expect(b).rejects.toMatchObject({ name: 'AbortError' });
    await expect(p.decode({ ...job(3), signal: waiting.signal })).rejects.toMatchObject({ name: 'AbortError' });
    workers[0].decoded(workers[0].requests[0].id, [1]);
    await expect(a).resolves.toBeDefined();
    // The withdrawn job never reached the worker: the next one it got is job 2.
    expect(workers[0].requests[1].bytes).toEqual(Uint8Array.of(2));
    workers[0].decoded(workers[0].requests[1].id, [2]);
    await expect(c).resolves.toBeDefined();
    expect(p.stats()).toMatchObject({ segments: 2, withdrawn: 1 });
  });

  it('passes decode errors through with their message', async () => {
    const { p, workers } = pool(1, 2);
    const result = p.decode(job(0));
    workers[0].failed(workers[0].requests[0].id, 'vpcc: invalid bitstream: truncated');
    await expect(result).rejects.toThrow('vpcc: invalid bitstream: truncated');
    expect(p.stats().failures).toBe(1);
  });

  it('stops using a worker that failed; with none left every job fails with its error', async () => {
    const { p, workers } = pool(2, 4);
    const a = p.decode(job(0));
    const b = p.decode(job(1));
    const c = p.decode(job(2));
    workers[0].onerror!({ message: '', preventDefault() {} } as ErrorEvent);
    await expect(a).rejects.toThrow(/decode worker failed: could not start/);
    expect(workers[0].terminated).toBe(true);
    // The queued job waits for the live worker; the dead one gets nothing more.
    expect(workers[0].requests.length).toBe(1);
    expect(p.queued).toBe(1);
    workers[1].onerror!({ message: 'boom', preventDefault() {} } as ErrorEvent);
    await expect(b).rejects.toThrow(/decode worker failed: boom/);
    await expect(c).rejects.toThrow(/decode worker failed/);
    await expect(p.decode(job(3))).rejects.toThrow(/decode worker failed/);
  });

  it('replaces a worker whose wasm module crashed; the queued job goes to the new one', async () => {
    const { p, workers } = pool(1, 4);
    const first = p.decode(job(0));
    const second = p.decode(job(1));
    workers[0].failed(workers[0].requests[0].id, 'RuntimeError: memory access out of bounds', 'crashed');
    await expect(first).rejects.toThrow('RuntimeError: memory access out of bounds; decode worker restarted');
    expect(workers[0].terminated).toBe(true);
    expect(workers.length).toBe(2);
    expect(workers[1].requests[0].bytes).toEqual(Uint8Array.of(1));
    workers[1].decoded(workers[1].requests[0].id, [4]);
    expect((await second).frames.map(framePoints)).toEqual([4]);
    expect(p.parallelism).toBe(1);
    expect(p.stats()).toMatchObject({ segments: 1, failures: 1, restarts: 1 });
  });

  it('restarts a worker that dies after it has worked, but gives up on one whose module cannot load', async () => {
    const { p, workers } = pool(2, 4);
    const a = p.decode(job(0));
    const b = p.decode(job(1));
    workers[0].decoded(workers[0].requests[0].id, [1]);
    await a;
    const c = p.decode(job(2));
    // Worker 0 had answered: an uncaught error (say, out of memory) gets it replaced.
    workers[0].onerror!({ message: 'out of memory', preventDefault() {} } as ErrorEvent);
    await expect(c).rejects.toThrow(/decode worker failed: out of memory/);
    expect(workers.length).toBe(3);
    // Worker 1's module never loaded: that slot is dead, the pool keeps the replaced one.
    workers[1].failed(workers[1].requests[0].id, 'cannot load the vpcc wasm module', 'unloadable');
    await expect(b).rejects.toThrow(/cannot load the vpcc wasm module/);
    expect(workers[1].terminated).toBe(true);
    expect(p.parallelism).toBe(1);
    const d = p.decode(job(3));
    expect(workers[2].requests[0].bytes).toEqual(Uint8Array.of(3));
    workers[2].decoded(workers[2].requests[0].id, [2]);
    await expect(d).resolves.toBeDefined();
    expect(p.stats().restarts).toBe(1);
  });

  it('adds up the wasm memory its workers report; a replaced worker starts from nothing', async () => {
    const { p, workers } = pool(2, 4);
    expect(p.stats().workerMemoryBytes).toBe(0);
    const first = [0, 1].map((s) => p.decode(job(s)));
    workers[0].memoryBytes = 16 << 20;
    workers[1].memoryBytes = 48 << 20;
    workers[0].decoded(workers[0].requests[0].id, [1]);
    workers[1].decoded(workers[1].requests[0].id, [1]);
    await Promise.all(first);
    expect(p.stats().workerMemoryBytes).toBe(64 << 20);
    // The second worker traps on its next segment: its replacement has reported nothing yet.
    const next = p.decode(job(2));
    const onSecond = workers[1].requests.length > 1 ? workers[1] : workers[0];
    onSecond.failed(onSecond.requests.at(-1)!.id, 'unreachable', 'crashed');
    await expect(next).rejects.toThrow(/restarted/);
    expect(p.stats().workerMemoryBytes).toBe(onSecond === workers[1] ? 16 << 20 : 48 << 20);
    p.close();
  });

  it('rejects pending and queued jobs when closed', async () => {
    const { p, workers } = pool(1, 2);
    const a = p.decode(job(0));
    const b = p.decode(job(1));
    p.close();
    await expect(a).rejects.toThrow(/closed/);
    await expect(b).rejects.toThrow(/closed/);
    expect(workers[0].terminated).toBe(true);
    await expect(p.decode(job(2))).rejects.toThrow(/closed/);
  });

  it('fails a segment that takes too long and replaces its worker', async () => {
    vi.useFakeTimers();
    try {
      const { p, workers } = pool(1, 2, 1000);
      const stuck = p.decode(job(0));
      const next = p.decode(job(1));
      vi.advanceTimersByTime(1001);
      await expect(stuck).rejects.toThrow(/longer than 1000 ms; decode worker restarted/);
      expect(workers[0].terminated).toBe(true);
      // A fresh worker took the queued segment; a late reply from the old one is ignored.
      expect(workers.length).toBe(2);
      workers[0].decoded(workers[0].requests[0].id, [1]);
      workers[1].decoded(workers[1].requests[0].id, [9]);
      expect((await next).frames.map(framePoints)[0]).toBe(9);
      p.close();
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('defaultPoolSize', () => {
  it('gives every core a worker on one or two cores, then leaves one free, up to four', () => {
    expect([1, 2, 3, 4, 5, 8, 64].map(defaultPoolSize)).toEqual([1, 2, 2, 3, 4, 4, 4]);
  });
  it('falls back to one worker when the core count is unknown or nonsense', () => {
    expect([0, -3, NaN, Infinity].map(defaultPoolSize)).toEqual([1, 1, 1, 1]);
  });
});
