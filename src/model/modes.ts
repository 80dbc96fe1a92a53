/**
 * The delivery modes, listed once. The fixed modes follow the reference paper: `h2` (HTTP/2),
 * `qr` (every object on a reliable QUIC stream), `qpr` (the most visible objects reliably, the
 * rest as plain datagrams), `qpr-fec` (the same with RaptorQ repair), `q100-fec` (every object as
 * FEC datagrams); `adaptive` chooses per object and segment (src/player/adaptive.ts).
 */
export const PLAYER_MODES = ['h2', 'qr', 'qpr', 'qpr-fec', 'q100-fec', 'adaptive'] as const;

export type PlayerMode = (typeof PLAYER_MODES)[number];

/** The modes whose delivery is fixed by the mode itself (all but `adaptive`). */
export type FixedMode = Exclude<PlayerMode, 'adaptive'>;

export function isPlayerMode(value: string): value is PlayerMode {
  return (PLAYER_MODES as readonly string[]).includes(value);
}

/** How an object travels: on a reliable stream, or as RaptorQ-coded datagrams. */
export type Delivery = 'reliable' | 'datagram';

/**
 * How an object of a segment is fetched: reliably, as datagrams, or not at all (`skip`: the
 * previous frame is held — what `adaptive` chooses for the least valuable objects when even the
 * lowest qualities exceed what the link carries before the deadline).
 */
export type PlanDelivery = Delivery | 'skip';
