/**
 * `RequestQueue`: the serving order of the QUIC origin — RFC 9218 urgency, then request order —
 * kept on the client for HTTP/2, whose server side cannot keep it.
 *
 * The origin's HTTP/2 server (hyper) ignores priorities and interleaves every open response frame
 * by frame: with N responses in flight each gets 1/N of the link, so a later segment overtakes an
 * earlier one and a replacement for an abandoned object shares the link with everything requested
 * before it (in the QoE runs every h2 replacement arrived late). The queue grants one request at a
 * time in urgency order. The holder hands its turn on early, once the rest of its response would
 * arrive sooner than a new request gets its first byte, so the link does not idle for a round trip
 * between objects (`Turn.progress`).
 */

/** A granted request's turn. */
export interface Turn {
  /**
   * Reports the response's progress; hands the turn on once what remains would arrive within the
   * shortest first-byte delay seen. `firstByteS` is when the response's first byte arrived.
   */
  progress(receivedBytes: number, totalBytes: number, nowS: number, firstByteS: number): void;
  /** Records the delay from the request leaving to its first byte (feeds the hand-on test). */
  firstByte(delayS: number): void;
  /** Ends the turn (idempotent): the response is complete, failed or cancelled. */
  release(): void;
}

interface Waiter {
  urgency: number;
  sequence: number;
  grant: (turn: Turn | null) => void;
}

export class RequestQueue {
  private waiting: Waiter[] = [];
  private busy = false;
  private sequence = 0;
  /** Shortest request → first byte delay seen (seconds): a round trip plus the origin's time. */
  private minFirstByteS = Infinity;

  /** Waits for the request's turn; null if `signal` aborts first. */
  acquire(urgency: number, signal?: AbortSignal): Promise<Turn | null> {
    if (signal?.aborted) return Promise.resolve(null);
    return new Promise((resolve) => {
      const waiter: Waiter = { urgency, sequence: this.sequence++, grant: resolve };
      const onAbort = () => {
        this.waiting = this.waiting.filter((w) => w !== waiter);
        resolve(null);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      waiter.grant = (turn) => {
        signal?.removeEventListener('abort', onAbort);
        resolve(turn);
      };
      this.waiting.push(waiter);
      this.waiting.sort((a, b) => a.urgency - b.urgency || a.sequence - b.sequence);
      this.grantNext();
    });
  }

  /** Requests waiting for a turn. */
  get pending(): number {
    return this.waiting.length;
  }

  private grantNext(): void {
    if (this.busy) return;
    const next = this.waiting.shift();
    if (!next) return;
    this.busy = true;
    let holding = true;
    const handOn = () => {
      if (!holding) return;
      holding = false;
      this.busy = false;
      this.grantNext();
    };
    next.grant({
      progress: (received, total, nowS, firstByteS) => {
        const elapsedS = nowS - firstByteS;
        // Without a first-byte delay measured yet there is nothing to compare with: keep the turn.
        if (!holding || !Number.isFinite(this.minFirstByteS) || !(total > 0) || received <= 0 || elapsedS <= 0) return;
        const remainingS = (total - received) / (received / elapsedS);
        if (remainingS <= this.minFirstByteS) handOn();
      },
      firstByte: (delayS) => {
        if (delayS >= 0) this.minFirstByteS = Math.min(this.minFirstByteS, delayS);
      },
      release: handOn,
    });
  }
}
