/**
 * Time for the playout loop. The loop only ever asks "what time is it" and "wake me at t", so it
 * runs on the browser's clock in the app and on a virtual clock in the trace-driven simulation
 * and the unit tests, with the same code.
 */

export interface Clock {
  /** Seconds on a monotonic clock. */
  now(): number;
  /** Resolves at `now() + seconds` (at once for ≤ 0), or rejects with the signal's reason. */
  sleep(seconds: number, signal?: AbortSignal): Promise<void>;
}

/** The browser's / Node's monotonic clock. */
export const realClock: Clock = {
  now: () => performance.now() / 1000,
  sleep: (seconds, signal) =>
    new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, Math.max(0, seconds * 1000));
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};

/**
 * A discrete-event clock: time only moves when every task is waiting on it, and then jumps to the
 * next wake-up. Sleepers at the same time wake in the order they went to sleep.
 */
export class VirtualClock implements Clock {
  private time: number;
  private seq = 0;
  private readonly sleepers: Array<{ at: number; seq: number; wake: () => void }> = [];

  constructor(start = 0) {
    this.time = start;
  }

  now(): number {
    return this.time;
  }

  sleep(seconds: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const onAbort = () => {
        const i = this.sleepers.indexOf(entry);
        if (i >= 0) this.sleepers.splice(i, 1);
        reject(signal!.reason);
      };
      const entry = {
        at: this.time + Math.max(0, seconds),
        seq: this.seq++,
        wake: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      this.sleepers.push(entry);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Number of pending sleepers. */
  get pending(): number {
    return this.sleepers.length;
  }

  /**
   * Runs until `until` (seconds) or until nothing sleeps: lets every runnable task settle (a few
   * macrotask turns), then wakes the earliest sleeper, and repeats.
   */
  async run(until = Infinity): Promise<void> {
    for (;;) {
      await settle();
      if (this.sleepers.length === 0) return;
      this.sleepers.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.sleepers[0];
      if (next.at > until) {
        this.time = until;
        return;
      }
      this.sleepers.shift();
      this.time = Math.max(this.time, next.at);
      next.wake();
    }
  }
}

/** Lets pending promise chains run to their next wait: microtasks all run before the next
 *  macrotask, so two macrotask turns are plenty (setImmediate in Node, where this clock runs). */
async function settle(): Promise<void> {
  const turn = typeof setImmediate === 'function' ? (r: () => void) => setImmediate(r) : (r: () => void) => setTimeout(r, 0);
  for (let i = 0; i < 2; i++) await new Promise<void>((r) => turn(r));
}

/** `promise`, or a rejection with the signal's reason once it aborts (the listener removed either way). */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  let onAbort!: () => void;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  return Promise.race([promise, aborted]).finally(() => signal.removeEventListener('abort', onAbort));
}
