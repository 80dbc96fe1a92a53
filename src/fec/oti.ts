/**
 * The object transmission information (OTI, RFC 6330 §3.3.2–3.3.3) of a datagram object: its 12
 * bytes read, and checked before anything is allocated for the object. The RaptorQ decoder sizes
 * its source blocks from the transfer length and symbol size up front, so an OTI from a hostile or
 * buggy origin is the one place where a few bytes could ask the FEC worker for gigabytes. No
 * wasm here: the transport checks a RESPONSE with it before the worker is asked to do anything.
 */

/** RFC 6330 §3.3.2–3.3.3 object transmission information, 12 bytes. */
export interface TransmissionInfo {
  /** F: the object's length in bytes. */
  transferLength: number;
  /** T: bytes per symbol. */
  symbolSize: number;
  /** Z: source blocks. */
  sourceBlocks: number;
  /** N: sub-blocks per source block. */
  subBlocks: number;
  /** Al: symbol alignment in bytes. */
  alignment: number;
}

/** What a checked OTI implies for the decoder's memory. */
export interface SymbolLayout {
  info: TransmissionInfo;
  /** Kt = ⌈F / T⌉: source symbols over all blocks. */
  sourceSymbols: number;
  /** KL = ⌈Kt / Z⌉: source symbols of the largest block (RFC 6330 §4.4.1.2 partitioning). */
  largestBlock: number;
}

/** RFC 6330's largest source block: K' ≤ 56 403 source symbols (§5.6, Table 2). */
export const MAX_SOURCE_BLOCK_SYMBOLS = 56_403;
/**
 * The smallest symbol a client takes. The origin answers a datagram request with 400 when its
 * datagrams leave room for less (docs/protocol.md §3): smaller symbols only multiply the
 * decoder's per-symbol bookkeeping for the same object.
 */
export const MIN_SYMBOL_SIZE = 64;

/** An OTI the client refuses: the message says which rule it broke. */
export class OtiError extends RangeError {
  override name = 'OtiError';
}

export function parseOti(oti: Uint8Array): TransmissionInfo {
  if (oti.length !== 12) throw new OtiError(`OTI must be 12 bytes, got ${oti.length}`);
  let transferLength = 0;
  for (let i = 0; i < 5; i++) transferLength = transferLength * 256 + oti[i];
  return {
    transferLength,
    symbolSize: (oti[6] << 8) | oti[7],
    sourceBlocks: oti[8],
    subBlocks: (oti[9] << 8) | oti[10],
    alignment: oti[11],
  };
}

/**
 * Checks an OTI against RFC 6330's limits and against itself, and the transfer length against
 * `maxTransferLength` (the object size the client accepts for this request). Throws `OtiError`.
 */
export function checkOti(oti: Uint8Array, maxTransferLength: number): SymbolLayout {
  const info = parseOti(oti);
  const { transferLength: f, symbolSize: t, sourceBlocks: z, subBlocks: n, alignment: al } = info;
  const fail = (why: string): never => {
    throw new OtiError(`OTI refused: ${why} (${JSON.stringify(info)})`);
  };
  if (f < 1) fail('empty object');
  if (f > maxTransferLength) fail(`transfer length ${f} above the ${maxTransferLength}-byte limit`);
  if (al < 1) fail('alignment 0');
  if (t < Math.max(MIN_SYMBOL_SIZE, al) || t % al !== 0) fail(`symbol size ${t} not a multiple of the alignment ≥ ${MIN_SYMBOL_SIZE}`);
  const kt = Math.ceil(f / t);
  if (z < 1 || z > kt) fail(`${z} source blocks for ${kt} source symbols`);
  const kl = Math.ceil(kt / z);
  if (kl > MAX_SOURCE_BLOCK_SYMBOLS) fail(`${kl} symbols in a source block, above RFC 6330's ${MAX_SOURCE_BLOCK_SYMBOLS}`);
  // Each sub-block's share of a symbol (a sub-symbol) is at least Al bytes (RFC 6330 §4.4.1.2).
  if (n < 1 || n > t / al) fail(`${n} sub-blocks for ${t}-byte symbols aligned to ${al}`);
  return { info, sourceSymbols: kt, largestBlock: kl };
}

/**
 * Symbols of one source block of `k` source symbols worth keeping: the source symbols plus every
 * repair symbol the origin may send for it, planned and on demand together (at most max(2K, 32),
 * docs/protocol.md → REPAIR). More can only be duplicates or garbage.
 */
export function usefulSymbolsPerBlock(k: number): number {
  return k + Math.max(2 * k, 32);
}
