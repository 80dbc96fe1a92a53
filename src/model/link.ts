/**
 * What the player knows about the network path, as the planner reads it: one snapshot of the
 * link estimates (src/link/estimates.ts owns them) per planned segment.
 */

/** Datagram loss as FEC planning models it (src/player/fecModel.ts). */
export interface LossModel {
  /** Mean datagram loss rate, 0 … 1. */
  rate: number;
  /** Mean loss-burst length in datagrams (≥ 1). */
  meanBurst: number;
}

export interface LinkSnapshot {
  /** Application goodput of recent segments (bit/s), null before the first one was measured. */
  throughputBps: number | null;
  loss: LossModel;
  /** The path's round-trip time (seconds; src/transport/pathRtt.ts defines which). */
  rttS: number;
  /** The path's propagation round trip, without queueing (seconds): the part of a fetch no bandwidth shortens. */
  minRttS: number;
  /** Where the RTT came from: the origin's PATH reports, or the player's request → response times. */
  rttSource: 'origin' | 'responses';
}
