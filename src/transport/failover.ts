/**
 * The failover rules of the WebTransport path, as a pure state machine: which endpoint to open
 * next after a session is lost or an attempt fails, when WebTransport has failed often enough
 * that requests go over HTTP/2 instead, and when to probe it again in the background. No timers
 * and no I/O: the session (webtransport.ts) reports what happened and does what the answer says.
 * The prose version is docs/player.md → "Failover and fallback".
 *
 * Endpoints are numbered as `/config.json` lists them (docs/protocol.md §1); the origins are
 * stateless, so any of them serves any request and moving costs only a handshake.
 */

export interface FailoverSettings {
  /**
   * Failed attempts in a row, over every endpoint, after which requests go over HTTP/2 (default:
   * the loss, every other endpoint's attempt and its `survivorRetries`, and the lost endpoint once
   * more: with one origin, two failures; with two, five).
   */
  attemptsBeforeFallback: number;
  /**
   * Attempts made again at an endpoint other than the lost one after its attempt failed, the
   * first after `survivorRetryMs`, each later one after twice the wait before it. Soon, because
   * such a failure is seldom the endpoint's: Chromium's network service can restart in the
   * instant an origin's connection dies (seen with an origin killed on 127.0.0.1, in about one
   * loss in five: the net log starts afresh and every WebTransport under way ends "Connection
   * lost."), and an attempt made then fails although the other origin is fine.
   */
  survivorRetries: number;
  survivorRetryMs: number;
  /** Wait before an attempt once every endpoint has failed in this run of failures; doubles per attempt. */
  backoffMs: number;
  maxBackoffMs: number;
  /** While on HTTP/2: the first background probe after this long, then doubling up to `probeMaxMs`. */
  probeFirstMs: number;
  probeMaxMs: number;
}

export const DEFAULT_FAILOVER: Omit<FailoverSettings, 'attemptsBeforeFallback'> = {
  survivorRetries: 2, survivorRetryMs: 200, backoffMs: 250, maxBackoffMs: 4000, probeFirstMs: 2000, probeMaxMs: 16_000,
};

/**
 * What ended the last session or attempt: `stalled` — the session was closed because requests
 * waited without a byte (stall.ts); `lost` — an open session closed; `failed` — an attempt to open
 * one did not succeed.
 */
export type FailoverCause = 'stalled' | 'lost' | 'failed';

/** What to do next: open a session to `endpoint` after `delayMs`, or carry requests over HTTP/2. */
export type FailoverStep = { kind: 'connect'; endpoint: number; delayMs: number } | { kind: 'fall-back' };

export class FailoverRules {
  private readonly settings: FailoverSettings;
  /** The endpoint in use, or the last one tried. */
  private endpoint = 0;
  /** Attempts and sessions that failed since the last session opened. */
  private failures = 0;
  /** Endpoints that failed since the last session opened (how often each), and the backoffs waited since. */
  private readonly failedInRun = new Map<number, number>();
  private backoffs = 0;
  /** The endpoint whose session was lost or stalled, in this run of failures (null: none, or no run). */
  private lost: number | null = null;
  /** Background probes that failed since the fallback. */
  private probes = 0;

  constructor(readonly endpointCount: number, settings: Partial<FailoverSettings> = {}) {
    if (!(endpointCount >= 1)) throw new Error(`failover needs at least one endpoint, got ${endpointCount}`);
    const retries = settings.survivorRetries ?? DEFAULT_FAILOVER.survivorRetries;
    this.settings = { ...DEFAULT_FAILOVER, attemptsBeforeFallback: 2 + (endpointCount - 1) * (1 + retries), ...settings };
  }

  /** The endpoint in use, or the one last tried. */
  get current(): number {
    return this.endpoint;
  }

  /** A session to `endpoint` opened: it is the one in use, and every count starts again. */
  connected(endpoint: number): void {
    this.endpoint = endpoint;
    this.failures = 0;
    this.failedInRun.clear();
    this.backoffs = 0;
    this.probes = 0;
    this.lost = null;
  }

  /**
   * What to do after `cause`. A stalled session's endpoint is tried again at once (its link may be
   * fine; stall.ts). A lost session moves to the next endpoint at once (the origin may be gone;
   * with one endpoint, the same after a backoff). A failed attempt at an endpoint other than the
   * lost one is made again `survivorRetries` times, soon (its failure may be the browser's, not
   * the origin's: see the setting); any other failed attempt moves to the next endpoint, at
   * once if it has not failed since the last session opened, else after a doubling backoff. After
   * `attemptsBeforeFallback` failures in a row requests go over HTTP/2 (`fall-back`), and
   * `nextProbe` says when to try WebTransport again.
   */
  next(cause: FailoverCause): FailoverStep {
    this.failures++;
    const failedHere = (this.failedInRun.get(this.endpoint) ?? 0) + 1;
    this.failedInRun.set(this.endpoint, failedHere);
    if (cause !== 'failed') this.lost = this.endpoint;
    if (this.failures >= this.settings.attemptsBeforeFallback) {
      this.probes = 0;
      return { kind: 'fall-back' };
    }
    if (cause === 'stalled') return { kind: 'connect', endpoint: this.endpoint, delayMs: 0 };
    if (cause === 'failed' && failedHere <= this.settings.survivorRetries && this.endpoint !== this.lost && this.endpointCount > 1) {
      return { kind: 'connect', endpoint: this.endpoint, delayMs: this.settings.survivorRetryMs * 2 ** (failedHere - 1) };
    }
    this.endpoint = (this.endpoint + 1) % this.endpointCount;
    // An endpoint not yet tried in this run costs nothing to try; one tried before waits longer each time.
    const delayMs = this.failedInRun.has(this.endpoint) ? Math.min(this.settings.maxBackoffMs, this.settings.backoffMs * 2 ** this.backoffs++) : 0;
    return { kind: 'connect', endpoint: this.endpoint, delayMs };
  }

  /**
   * Where to move when the origin in use drains (it finishes what it sends, then closes): every
   * other endpoint, in turn from the one after it, opened together (the first to open wins). None
   * with a single endpoint: the session stays until the origin closes it, then fails over as lost.
   */
  drainTargets(): number[] {
    return Array.from({ length: this.endpointCount - 1 }, (_, k) => (this.endpoint + 1 + k) % this.endpointCount);
  }

  /**
   * While requests go over HTTP/2: which endpoint the next background probe opens, and after how
   * long (the first soon, later ones less often). Endpoints are probed in turn, from the one after
   * the endpoint whose session was lost (the lost one last: its origin is the likeliest gone).
   */
  nextProbe(): { endpoint: number; delayMs: number } {
    const delayMs = Math.min(this.settings.probeMaxMs, this.settings.probeFirstMs * 2 ** this.probes);
    const first = this.lost === null ? this.endpoint : this.lost + 1;
    return { endpoint: (first + this.probes) % this.endpointCount, delayMs };
  }

  /** The probe `nextProbe` named failed: the next one waits longer and tries the next endpoint. */
  probeFailed(): void {
    this.probes++;
  }
}
