/**
 * Datagram loss estimation from RaptorQ symbol ids. The origin sends a request's symbols in order
 * (source ESIs, then repair) and tells how many it sent (SENT); the gaps in what arrived, placed
 * in that order by `sendingIndex`, are the losses, and runs of consecutive gaps are the bursts. The estimate feeds the next REQUEST's `loss_ppm` and
 * `burst_milli`, from which the origin plans repair (docs/protocol.md §3.3).
 */

/** What one delivery saw: how many symbols were sent and which of them arrived (one source block). */
export interface SymbolObservation {
  sent: number;
  /** Positions in sending order (see `sendingIndex`), not raw ESIs. */
  arrived: Iterable<number>;
}

/**
 * A symbol's position in the origin's sending order: source symbols are ESI 0 … K−1, repair symbol
 * n carries ESI `firstRepairEsi` + n (K' + n, docs/protocol.md §3) and is sent K + n-th. Null for
 * an ESI no symbol of this block carries.
 */
export function sendingIndex(esi: number, sourceSymbols: number, firstRepairEsi: number): number | null {
  if (esi >= 0 && esi < sourceSymbols) return esi;
  if (esi >= firstRepairEsi && firstRepairEsi >= sourceSymbols) {
    const index = sourceSymbols + (esi - firstRepairEsi);
    // The origin sends at most max(2K, 32) repair symbols per block (docs/protocol.md → REPAIR):
    // a position beyond is not a symbol it sent, and would stretch the loss span without end.
    return index < sourceSymbols + Math.max(2 * sourceSymbols, 32) ? index : null;
  }
  return null;
}

/**
 * The datagram-only view of a delivery: the origin may send some symbols on the request stream
 * instead (SYMBOL, docs/protocol.md §3), taken from ahead of the datagrams it still had queued.
 * Those were never exposed to datagram loss, so they leave the sequence: the span is the
 * datagrams up to the last one received (`observedUpTo` positions, stream ones removed), and
 * positions close up around them so a loss run either side of one stays one run.
 */
export function datagramObservation(observedUpTo: number, byDatagram: Iterable<number>, byStream: Iterable<number>): SymbolObservation {
  const stream = [...byStream].filter((i) => i >= 0 && i < observedUpTo).sort((a, b) => a - b);
  const streamSet = new Set(stream);
  const before = (index: number) => {
    let lo = 0;
    let hi = stream.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (stream[mid] < index) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const arrived: number[] = [];
  for (const index of byDatagram) {
    if (index >= 0 && index < observedUpTo && !streamSet.has(index)) arrived.push(index - before(index));
  }
  return { sent: observedUpTo - streamSet.size, arrived };
}

export interface LossEstimate {
  /** Mean loss rate, 0 … 1. */
  rate: number;
  /** Mean length of a run of lost datagrams (≥ 1). */
  meanBurst: number;
  /** Symbols the estimate rests on, after decay. */
  weight: number;
}

/** Counts losses and loss runs of one delivery. */
export function countLosses(observation: SymbolObservation): { lost: number; runs: number } {
  const received = new Uint8Array(observation.sent);
  for (const index of observation.arrived) if (index >= 0 && index < observation.sent) received[index] = 1;
  let lost = 0;
  let runs = 0;
  for (let index = 0; index < observation.sent; index++) {
    if (received[index]) continue;
    lost++;
    if (index === 0 || received[index - 1]) runs++;
  }
  return { lost, runs };
}

/**
 * Exponentially decayed loss statistics over recent deliveries. Decay is per symbol, so a large
 * object counts more than a small one and the estimate follows a change within ~`halfLifeSymbols`.
 */
export class LossEstimator {
  private sent = 0;
  private lost = 0;
  private runs = 0;
  private readonly decayPerSymbol: number;

  constructor(halfLifeSymbols = 5000) {
    this.decayPerSymbol = Math.pow(0.5, 1 / halfLifeSymbols);
  }

  observe(observation: SymbolObservation): void {
    if (observation.sent <= 0) return;
    const { lost, runs } = countLosses(observation);
    const keep = Math.pow(this.decayPerSymbol, observation.sent);
    this.sent = this.sent * keep + observation.sent;
    this.lost = this.lost * keep + lost;
    this.runs = this.runs * keep + runs;
  }

  estimate(): LossEstimate {
    return {
      rate: this.sent > 0 ? this.lost / this.sent : 0,
      meanBurst: this.runs > 0 ? Math.max(1, this.lost / this.runs) : 1,
      weight: this.sent,
    };
  }

  /** The REQUEST fields: loss in parts per million, burst length × 1000 (0 = nothing seen yet). */
  wireFields(): { lossPpm: number; burstMilli: number } {
    const { rate, meanBurst, weight } = this.estimate();
    if (weight === 0) return { lossPpm: 0, burstMilli: 0 };
    return { lossPpm: Math.round(rate * 1e6), burstMilli: Math.round(meanBurst * 1000) };
  }
}
