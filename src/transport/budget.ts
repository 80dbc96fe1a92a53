/**
 * `InFlightBudget`: a cap on the object bytes all requests together may be receiving at once,
 * over every transport. A request reserves its object's size as soon as that size is known (a
 * RESPONSE, a Content-Length) and before it allocates or reads the object; it gives the bytes
 * back when it ends, delivered or not. A request that does not fit waits its turn (first come,
 * first served, so a large object is not starved by small ones) while its bytes wait in the
 * network's flow control; it fails with `InFlightBudgetError` when it can never fit, when it
 * has waited past its deadline, or at once when its signal aborts.
 *
 * The per-request cap is limits.ts; this bounds their sum, so that many requests to a hostile or
 * buggy origin cannot add up to gigabytes either.
 */
import { PROTOCOL_MAX_OBJECT_BYTES } from './limits';

/** Default budget: two objects of the largest size the client takes, or many ordinary ones. */
export const DEFAULT_IN_FLIGHT_BYTES = 2 * PROTOCOL_MAX_OBJECT_BYTES;

/** A request the budget could not take: too large for it, or waited too long. */
export class InFlightBudgetError extends Error {
  override name = 'InFlightBudgetError';
}

/** Bytes held by one request; `release` (idempotent) gives them back. */
export interface Reservation {
  readonly bytes: number;
  release(): void;
}

interface Waiter {
  bytes: number;
  grant: () => void;
}

export class InFlightBudget {
  /** Bytes reserved now. */
  inUse = 0;
  /** The most ever reserved at once. */
  peak = 0;
  /** Requests that had to wait for room. */
  waited = 0;
  private readonly queue: Waiter[] = [];

  constructor(readonly capacity = DEFAULT_IN_FLIGHT_BYTES) {}

  /**
   * Reserves `bytes`, waiting for room behind earlier requests.
   * @param options.signal aborting gives up the wait (rejects with the signal's reason)
   * @param options.timeoutMs give up after waiting this long (rejects with InFlightBudgetError)
   */
  acquire(bytes: number, options: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<Reservation> {
    if (bytes > this.capacity) {
      return Promise.reject(new InFlightBudgetError(`an object of ${bytes} bytes can never fit the ${this.capacity}-byte in-flight budget`));
    }
    if (this.queue.length === 0 && this.inUse + bytes <= this.capacity) return Promise.resolve(this.take(bytes));
    const { signal, timeoutMs } = options;
    if (signal?.aborted) return Promise.reject(signal.reason);
    this.waited++;
    return new Promise<Reservation>((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const leave = (error: unknown) => {
        const at = this.queue.indexOf(waiter);
        if (at < 0) return;
        this.queue.splice(at, 1);
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        reject(error);
        // The head of the queue may have been what held the others back.
        this.grantWaiting();
      };
      const onAbort = () => leave(signal!.reason);
      const waiter: Waiter = {
        bytes,
        grant: () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          resolve(this.take(bytes));
        },
      };
      this.queue.push(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
      if (timeoutMs !== undefined && Number.isFinite(timeoutMs)) {
        timer = setTimeout(() => leave(new InFlightBudgetError(
          `waited ${Math.round(timeoutMs)} ms for ${bytes} bytes of the ${this.capacity}-byte in-flight budget (${this.inUse} in use)`,
        )), Math.max(0, timeoutMs));
      }
    });
  }

  private take(bytes: number): Reservation {
    this.inUse += bytes;
    this.peak = Math.max(this.peak, this.inUse);
    let held = true;
    return {
      bytes,
      release: () => {
        if (!held) return;
        held = false;
        this.inUse -= bytes;
        this.grantWaiting();
      },
    };
  }

  /** Grants waiting requests in order while the first of them fits. */
  private grantWaiting(): void {
    while (this.queue.length > 0 && this.inUse + this.queue[0].bytes <= this.capacity) this.queue.shift()!.grant();
  }
}

/** The one budget both transports use unless given their own. */
export const sharedInFlightBudget = new InFlightBudget();
