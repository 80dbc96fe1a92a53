/**
 * The decoder pool: a few decode workers (each with its own wasm module and WebCodecs decoders)
 * behind the player's `SegmentDecoder` interface. Jobs wait in one bounded queue, and a worker
 * that comes free takes the waiting job due first: earliest `dueAt` (the segment's playout
 * deadline), equal due times in arrival order, a job without one after every job with one — so
 * with no due times, or equal ones, the queue is first in, first out. Why: after an outage a
 * backlog of objects arrives together, and in arrival order the segment due next could wait
 * behind decodes of later segments (0.1–0.5 s each on two cores), prolonging the freeze.
 * A job can be withdrawn while it waits (its `signal`): the playout loop withdraws the objects
 * of a segment it has already shown, so work that can no longer be seen never holds up the
 * segments still to come. The queue bound is a guard against a caller that never withdraws
 * anything; a full queue rejects at once rather than growing without bound.
 */
import type { DecodedSegment, DecodeJob, SegmentDecoder } from '../model/decoder';
import type { AtlasFrame } from '../model/frames';
import type { DecodeResult, FromWorker, ToWorker } from './protocol';
import { DEFAULT_MAX_ATLAS_SIZE } from './picture';
import type { SegmentTiming, DecodeOutput } from './segment';
import { startModuleWorker } from '../workers/moduleWorker';
import type { HevcModuleLocation } from './hevc';
import { bundledHevcModule } from './hevcLocation';
import type { CoreModuleInfo } from './coreModule';
// The bundled worker script's URL (Vite emits it beside this module; in development it is the source).
import decodeWorkerUrl from './worker.ts?worker&url';

export interface DecoderPoolOptions {
  /** Workers (default `defaultPoolSize(navigator.hardwareConcurrency)`). */
  size?: number;
  /**
   * Jobs allowed to wait for a worker (default 32: the player keeps at most a few segments of
   * objects in flight and withdraws stale ones, so only a runaway caller reaches it).
   */
  maxQueued?: number;
  /** Makes a worker (default: the decode worker emitted beside this module, from any origin). */
  createWorker?: () => Worker;
  /**
   * A segment still not decoded after this long fails, and its worker is replaced by a fresh one
   * (default 60 000 ms), so a stuck decoder cannot stall the player forever.
   */
  timeoutMs?: number;
  /** What `decode()` (the player's interface) returns per frame (default points; see DecodeOutput). */
  output?: DecodeOutput;
  /**
   * Largest atlas width and height a segment may have (default `DEFAULT_MAX_ATLAS_SIZE`, 4096): a
   * larger one fails as a decode error before any of its pictures is decoded.
   */
  maxAtlasSize?: number;
  /**
   * The optional HEVC module (libde265, LGPL-3.0) for HEVC video this browser's WebCodecs cannot
   * decode: its files' URLs (default: the ones bundled beside this library), or null for none —
   * then such segments fail with a `CodecUnavailableError` and the module is never fetched.
   */
  hevcModule?: HevcModuleLocation | null;
}

/**
 * Decode workers for a machine with `cores` logical cores. Segments decode independently, so
 * workers add throughput until the cores run out: a ~200 k-point smoothed frame takes ~50 ms of
 * CPU (docs/benchmarks.md), and four such objects at 30 frames/s need ~6 cores. On one or two
 * cores every core gets a worker (the page's own work is light next to decoding); beyond that
 * one core stays free for the page, rendering and the FEC worker, and at most four workers run,
 * each holding its own wasm heap (tens of MB for large frames).
 */
export function defaultPoolSize(cores: number): number {
  const n = Number.isFinite(cores) ? Math.floor(cores) : 1;
  if (n <= 2) return Math.max(1, n);
  return Math.min(4, n - 1);
}

/** A decoded segment with where its time went (and frame MD5s when asked for). */
export interface DetailedSegment extends DecodedSegment {
  timing: SegmentTiming;
  /** Milliseconds the job waited for a free worker. */
  queuedMs: number;
  md5?: string[];
  /** With output 'atlas' or 'both': the frames' pictures and atlas for GPU reconstruction. */
  atlasFrames?: AtlasFrame[];
}

export interface DecodeRequestOptions {
  /** Also return TMC2's checksum of every reconstructed frame. */
  md5?: boolean;
  /** Points (default), pictures + atlas for GPU reconstruction, or both. */
  output?: DecodeOutput;
  /** CPU reconstruction without the stream's post-processing (default: with it). */
  postProcess?: boolean;
  /** Largest atlas width and height taken (default: the pool's). */
  maxAtlasSize?: number;
  /**
   * The V3C level the manifest declares for the segment (`ptl_level_idc`): a segment whose atlas
   * is larger than it allows fails as a decode error while parsing, before any allocation for it.
   */
  v3cLevelIdc?: number;
  /**
   * When the segment is due on screen, on the caller's clock (see `DecodeJob.dueAt`): waiting
   * jobs start earliest due first. Undefined: after every job that has one.
   */
  dueAt?: number;
}

export interface DecoderPoolStats {
  segments: number;
  frames: number;
  failures: number;
  rejectedBusy: number;
  /** Jobs withdrawn by their caller before a worker took them. */
  withdrawn: number;
  /** Workers replaced: after a wasm trap or abort, an error once they had worked, or a timeout. */
  restarts: number;
  /** Mean worker time per segment and per frame (reconstruction + post-processing + copy), ms. */
  meanSegmentMs: number;
  meanFrameMs: number;
  /** The core module build the last decoded segment ran on (threaded or single; coreModule.ts). */
  core?: CoreModuleInfo;
  /**
   * Wasm memory the live workers hold (bytes, summed as each last reported it). Wasm memory never
   * shrinks, so a worker's share is the most one segment has needed there; a restarted worker
   * starts again from nothing.
   */
  workerMemoryBytes: number;
}

interface Job {
  bytes: Uint8Array;
  /** What the worker is asked for. */
  options: Omit<DecodeRequestOptions, 'dueAt'>;
  /** The queue's order key: `dueAt`, or Infinity without one. */
  dueAt: number;
  enqueuedAt: number;
  resolve: (s: DetailedSegment) => void;
  reject: (e: Error) => void;
}

interface Slot {
  worker: Worker;
  busy?: { id: number; job: Job; startedAt: number; timer: ReturnType<typeof setTimeout> };
  /** Set when the worker failed (e.g. its module or wasm could not load): it gets no more jobs. */
  dead?: Error;
  /** The current worker has answered a job, so it could load: a later crash restarts it. */
  answered?: boolean;
  /** The current worker's wasm memory, as its last answer reported it. */
  memoryBytes: number;
}

export class DecoderPool implements SegmentDecoder {
  private readonly slots: Slot[];
  private readonly queue: Job[] = [];
  private readonly maxQueued: number;
  private readonly timeoutMs: number;
  private readonly createWorker: () => Worker;
  private readonly output: DecodeOutput;
  private readonly maxAtlasSize: number | undefined;
  private readonly hevcModule: HevcModuleLocation | undefined;
  private nextId = 1;
  private closed = false;
  private totals: { segments: number; frames: number; failures: number; rejectedBusy: number; withdrawn: number; restarts: number; segmentMs: number; frameMs: number; core?: CoreModuleInfo } =
    { segments: 0, frames: 0, failures: 0, rejectedBusy: 0, withdrawn: 0, restarts: 0, segmentMs: 0, frameMs: 0 };

  constructor(options: DecoderPoolOptions = {}) {
    const size = Math.max(1, options.size ?? defaultPoolSize(globalThis.navigator?.hardwareConcurrency ?? 1));
    this.maxQueued = options.maxQueued ?? 32;
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.output = options.output ?? 'points';
    this.maxAtlasSize = options.maxAtlasSize;
    this.hevcModule = options.hevcModule === null ? undefined : (options.hevcModule ?? bundledHevcModule());
    this.createWorker = options.createWorker ?? (() => startModuleWorker(decodeWorkerUrl, { name: 'holoquic-decode' }));
    this.slots = Array.from({ length: size }, () => {
      const slot = { worker: undefined as unknown as Worker } as Slot;
      this.startWorker(slot);
      return slot;
    });
  }

  private startWorker(slot: Slot): void {
    const worker = this.createWorker();
    slot.worker = worker;
    slot.answered = false;
    slot.memoryBytes = 0;
    // Messages from a worker that was replaced meanwhile are ignored.
    worker.onmessage = (event: MessageEvent<FromWorker>) => {
      if (slot.worker === worker) this.finish(slot, event.data);
    };
    worker.onerror = (event) => {
      event.preventDefault();
      if (slot.worker !== worker) return;
      const error = new Error(`decode worker failed: ${event.message || 'could not start (is the wasm module built?)'}`);
      // A worker that never answered could not start, and a new one would not either; one that
      // had worked died of something else (memory, a bug) and is worth another start.
      if (slot.answered) this.restart(slot, error);
      else this.fail(slot, error);
    };
  }

  /** Segments decoded at the same time: the workers still alive (the playout loop budgets by it). */
  get parallelism(): number {
    return Math.max(1, this.slots.filter((slot) => !slot.dead).length);
  }

  decode(job: DecodeJob): Promise<DecodedSegment> {
    return this.decodeDetailed(job.bytes, { output: this.output, v3cLevelIdc: job.v3cLevelIdc, dueAt: job.dueAt }, job.signal);
  }

  /** The largest atlas the workers take, in samples: the player refuses Representations whose level allows more. */
  get maxAtlasSamples(): number {
    const side = this.maxAtlasSize ?? DEFAULT_MAX_ATLAS_SIZE;
    return side * side;
  }

  /**
   * Decodes a segment, with the outputs `options` ask for. Aborting `signal` while the job still
   * waits for a worker withdraws it (the promise rejects with an `AbortError`); a job already
   * running finishes.
   */
  decodeDetailed(bytes: Uint8Array, options: DecodeRequestOptions = {}, signal?: AbortSignal): Promise<DetailedSegment> {
    if (this.closed) return Promise.reject(new Error('decoder pool closed'));
    if (signal?.aborted) return Promise.reject(withdrawn());
    const dead = this.slots.every((slot) => slot.dead);
    if (dead) return Promise.reject(this.slots[0].dead!);
    if (this.queue.length >= this.maxQueued) {
      this.totals.rejectedBusy++;
      return Promise.reject(new Error(`decoder busy: ${this.queue.length} segments already waiting`));
    }
    const { dueAt, ...request } = options;
    return new Promise((resolve, reject) => {
      const job: Job = { bytes, options: request, dueAt: orderKey(dueAt), enqueuedAt: performance.now(), resolve, reject };
      this.enqueue(job);
      signal?.addEventListener('abort', () => {
        const at = this.queue.indexOf(job);
        if (at < 0) return;
        this.queue.splice(at, 1);
        this.totals.withdrawn++;
        reject(withdrawn());
      }, { once: true });
      this.dispatch();
    });
  }

  /**
   * Puts `job` behind every waiting job due no later than it, so the queue stays in order of
   * due time (ties in arrival order) and a free worker takes its head.
   */
  private enqueue(job: Job): void {
    const before = this.queue.findIndex((waiting) => waiting.dueAt > job.dueAt);
    if (before < 0) this.queue.push(job);
    else this.queue.splice(before, 0, job);
  }

  /** Jobs waiting for a worker. */
  get queued(): number {
    return this.queue.length;
  }

  stats(): DecoderPoolStats {
    const t = this.totals;
    return {
      segments: t.segments, frames: t.frames, failures: t.failures, rejectedBusy: t.rejectedBusy, withdrawn: t.withdrawn, restarts: t.restarts,
      meanSegmentMs: t.segments ? t.segmentMs / t.segments : 0,
      meanFrameMs: t.frames ? t.frameMs / t.frames : 0,
      core: t.core,
      workerMemoryBytes: this.slots.reduce((sum, slot) => sum + (slot.dead ? 0 : slot.memoryBytes), 0),
    };
  }

  /** Terminates the workers; pending and queued jobs reject. */
  close(): void {
    this.closed = true;
    const error = new Error('decoder pool closed');
    for (const job of this.queue.splice(0)) job.reject(error);
    for (const slot of this.slots) {
      if (slot.busy) clearTimeout(slot.busy.timer);
      slot.busy?.job.reject(error);
      slot.busy = undefined;
      slot.worker.terminate();
    }
  }

  private dispatch(): void {
    const live = this.slots.filter((slot) => !slot.dead);
    if (live.length === 0) {
      const error = this.slots[0].dead!;
      for (const job of this.queue.splice(0)) job.reject(error);
      return;
    }
    for (const slot of live) {
      if (slot.busy || this.queue.length === 0) continue;
      const job = this.queue.shift()!;
      const id = this.nextId++;
      const timer = setTimeout(() => this.timeOut(slot, id), this.timeoutMs);
      slot.busy = { id, job, startedAt: performance.now(), timer };
      // The worker gets its own copy (the caller keeps its bytes) and owns it from then on.
      const bytes = job.bytes.slice();
      const message: ToWorker = { type: 'decode', id, bytes, maxAtlasSize: this.maxAtlasSize, hevcModule: this.hevcModule, ...job.options };
      slot.worker.postMessage(message, [bytes.buffer]);
    }
  }

  private finish(slot: Slot, reply: FromWorker): void {
    const busy = slot.busy;
    if (!busy || busy.id !== reply.id) return;
    clearTimeout(busy.timer);
    if (Number.isFinite(reply.memoryBytes)) slot.memoryBytes = reply.memoryBytes;
    if (reply.type === 'failed' && reply.worker === 'unloadable') return this.fail(slot, new Error(reply.message));
    if (reply.type === 'failed' && reply.worker === 'crashed') return this.restart(slot, new Error(`${reply.message}; decode worker restarted`));
    slot.busy = undefined;
    slot.answered = true;
    if (reply.type === 'decoded') this.succeed(busy, reply);
    else {
      this.totals.failures++;
      busy.job.reject(new Error(reply.message));
    }
    this.dispatch();
  }

  private succeed(busy: NonNullable<Slot['busy']>, reply: DecodeResult): void {
    const t = this.totals;
    t.segments++;
    t.frames += reply.frames.length;
    t.segmentMs += reply.timing.totalMs;
    t.frameMs += reply.timing.frameMs.reduce((a, b) => a + b, 0);
    if (reply.timing.core) t.core = reply.timing.core;
    busy.job.resolve({
      frames: reply.frames,
      decodeMs: performance.now() - busy.startedAt,
      timing: reply.timing,
      queuedMs: busy.startedAt - busy.job.enqueuedAt,
      md5: reply.md5,
      atlasFrames: reply.atlasFrames,
    });
  }

  /** The job took too long: fail it and give the slot a fresh worker. */
  private timeOut(slot: Slot, id: number): void {
    if (slot.busy?.id !== id) return;
    this.restart(slot, new Error(`decoding took longer than ${this.timeoutMs} ms; decode worker restarted`));
  }

  /** Fails the slot's job (if any) with `error` and gives the slot a fresh worker. */
  private restart(slot: Slot, error: Error): void {
    if (slot.busy) {
      clearTimeout(slot.busy.timer);
      this.totals.failures++;
      slot.busy.job.reject(error);
      slot.busy = undefined;
    }
    this.totals.restarts++;
    slot.worker.terminate();
    this.startWorker(slot);
    this.dispatch();
  }

  private fail(slot: Slot, error: Error): void {
    slot.dead = error;
    slot.worker.terminate();
    if (slot.busy) {
      clearTimeout(slot.busy.timer);
      this.totals.failures++;
      slot.busy.job.reject(error);
      slot.busy = undefined;
    }
    // The others take the queue; with none left, every queued job fails with this error.
    this.dispatch();
  }
}

/** A due time as the queue orders it: none (or NaN) sorts after every real one. */
function orderKey(dueAt: number | undefined): number {
  return dueAt === undefined || Number.isNaN(dueAt) ? Infinity : dueAt;
}

function withdrawn(): Error {
  return new DOMException('decode withdrawn before it started', 'AbortError');
}
