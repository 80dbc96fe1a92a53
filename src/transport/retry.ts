/**
 * `fetchWithRetry`: fetch for the few small requests playback cannot start without (origin
 * configuration, manifest, health check, pose trace). A network error or a transient HTTP status
 * (408, 425, 429, 5xx) is retried with jittered exponential backoff, because on a lossy link the
 * very first TCP + TLS handshake is the request most likely to fail, and an origin that is
 * restarting answers 503 for a moment. Anything else — 404, a bad manifest — fails at once.
 */

export interface RetryOptions {
  /** Attempts in all, including the first (default 5). */
  attempts?: number;
  /** Delay before the second attempt; doubles after each failure (default 250 ms). */
  baseDelayMs?: number;
  /** Upper bound of one delay (default 4 s). */
  maxDelayMs?: number;
  /** Called before each retry with the failure that caused it. */
  onRetry?: (attempt: number, reason: string, delayMs: number) => void;
  /** Injected in tests. */
  fetchImpl?: typeof fetch;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  random?: () => number;
}

const TRANSIENT_STATUS = new Set([408, 425, 429, 500, 502, 503, 504]);

export function isTransientStatus(status: number): boolean {
  return TRANSIENT_STATUS.has(status);
}

function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Fetches `url`, retrying transient failures. Resolves with the last response (which may be a
 * non-OK one the caller reports); rejects with the last network error, or at once when `init.signal`
 * aborts.
 */
export async function fetchWithRetry(url: string | URL, init: RequestInit = {}, options: RetryOptions = {}): Promise<Response> {
  const attempts = Math.max(1, options.attempts ?? 5);
  const base = options.baseDelayMs ?? 250;
  const max = options.maxDelayMs ?? 4000;
  const doFetch = options.fetchImpl ?? fetch;
  const sleep = options.sleep ?? abortableSleep;
  const random = options.random ?? Math.random;
  for (let attempt = 1; ; attempt++) {
    let reason: string;
    try {
      const response = await doFetch(url, init);
      if (!isTransientStatus(response.status) || attempt >= attempts) return response;
      reason = `HTTP ${response.status}`;
    } catch (e) {
      if (init.signal?.aborted) throw init.signal.reason ?? e;
      if (attempt >= attempts) throw e;
      reason = e instanceof Error ? e.message : String(e);
    }
    // Full jitter between half and all of the exponential delay: clients that failed together
    // (an origin restart) do not all come back in the same instant.
    const delay = Math.min(max, base * 2 ** (attempt - 1)) * (0.5 + 0.5 * random());
    options.onRetry?.(attempt, reason, delay);
    await sleep(delay, init.signal ?? undefined);
  }
}

/** Attempts in all (the first included) for an object the origin answered with a transient status. */
export const OBJECT_ATTEMPTS = 3;
/** Seconds before an object's second attempt; doubles for each attempt after. */
export const OBJECT_RETRY_BASE_S = 0.1;

/**
 * Seconds to wait before asking again for an object whose response was a transient failure (a
 * 502 or 504 from a gateway or an object store behind the origin, a 503 while it restarts), or
 * null when not to: the status is not transient, `attempt` (1 for the first) used the last of
 * `OBJECT_ATTEMPTS`, or the retry could not arrive in time — its wait, a round trip and
 * `transferS` (its bytes at the link's rate) must end before `deadlineS`. Without it the player
 * held the object's last frame for the whole segment although a second answer could come in
 * tens of milliseconds. Deterministic (no jitter): one player's few retries do not synchronise a
 * crowd.
 */
export function objectRetryDelayS(status: number, attempt: number, nowS: number, deadlineS: number, rttS: number, transferS: number): number | null {
  if (!isTransientStatus(status) || attempt >= OBJECT_ATTEMPTS) return null;
  const delayS = OBJECT_RETRY_BASE_S * 2 ** (attempt - 1);
  const arrivesS = nowS + delayS + Math.max(0, rttS) + Math.max(0, transferS);
  return arrivesS < deadlineS ? delayS : null;
}
