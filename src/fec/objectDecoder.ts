/**
 * RaptorQ (RFC 6330) reassembly of one object from its datagram symbols, on npm `raptorq` (the
 * Rust `raptorq` crate compiled to wasm, the same library the origin encodes with).
 *
 * The origin derives its object transmission information (OTI) as raptorq's
 * `with_defaults(object_length, symbol_size)`; npm `raptorq` only offers that constructor, so we
 * rebuild the same decoder from the two numbers and check the rest of the OTI agrees.
 *
 * Memory is bounded before and while decoding: the OTI is checked (oti.ts) against the size the
 * client accepts for the object before anything is kept for it, and each source block keeps at
 * most the symbols the origin can usefully send for it; the rest are dropped and counted.
 *
 * Symbols wait in JavaScript, not in wasm memory, until every source block has as many distinct
 * symbols as it has source symbols (the least RaptorQ can decode from); only then is a wasm
 * decoder made, given them all, and freed, in one synchronous call. The worker serves one object
 * at a time this way, so its wasm heap holds one object's decoding and is empty between objects:
 * its size is set by the largest object decoded, not by how the symbols of the objects in flight
 * happen to interleave. Fed as they came, every open object kept its symbols in wasm memory,
 * each symbol a block of its own between the other objects' blocks, so the holes a finished
 * object left were too scattered for the next large one and the heap grew with each new overlap
 * of large objects — at any time in a long play (decoderMemory.test.ts: 150 of the demo's
 * objects six at a time needed 4.6 MB, 60 % more than the largest alone; now at most 20 %).
 * Waiting costs no decoding work: RaptorQ cannot finish before that many symbols anyway, and it
 * solves from scratch on every symbol after them.
 */
import initRaptorq, { Decoder, type InitOutput, initSync } from 'raptorq';
import { checkOti, type TransmissionInfo, usefulSymbolsPerBlock } from './oti';
import { packetSymbolId } from './packet';

let ready: Promise<void> | null = null;
let raptorq: InitOutput | null = null;

/**
 * Wasm memory one object's decoding needs, as a multiple of the object's size: measured 3.4–3.6×
 * for the demo's 45–520 kB objects on a fresh module (repair path; every source symbol: 3.0×), and
 * up to 11 % more after larger objects left the allocator's free space laid out differently. A
 * reservation of 4× kept 150 objects of up to that size, six open at once, within it
 * (decoderMemory.test.ts).
 */
export const DECODE_FOOTPRINT_FACTOR = 4;
/** Objects reserved for at most: beyond this (64 MiB of wasm memory) memory grows as they come. */
export const MAX_RESERVED_OBJECT_BYTES = 16 * 2 ** 20;

/**
 * Loads the raptorq wasm once. In the browser (and workers) it is fetched next to the module;
 * tests in Node pass the wasm bytes (each call then makes a fresh instance).
 */
export function loadRaptorq(wasmBytes?: BufferSource): Promise<void> {
  if (wasmBytes) {
    raptorq = initSync(wasmBytes);
    ready = Promise.resolve();
  }
  ready ??= initRaptorq().then((exports) => void (raptorq = exports));
  return ready;
}

/**
 * Bytes of the RaptorQ module's wasm memory (0 before it loaded). Wasm memory only grows, so this
 * is the most one object's decoding has needed so far (or what was reserved).
 */
export function raptorqMemoryBytes(): number {
  return raptorq?.memory.buffer.byteLength ?? 0;
}

/**
 * Grows the RaptorQ module's memory at once to what decoding objects of up to `objectBytes`
 * needs (`DECODE_FOOTPRINT_FACTOR`; at most for `MAX_RESERVED_OBJECT_BYTES`): one block that
 * large is allocated and freed, and the allocator keeps the space. Called when playback starts
 * with the largest object the manifest lets the player expect, the worker's memory is then set
 * during the warm-up instead of whenever the adaptation first reaches the largest segment.
 */
export function reserveRaptorqMemory(objectBytes: number): void {
  const bytes = Math.ceil(DECODE_FOOTPRINT_FACTOR * Math.min(objectBytes, MAX_RESERVED_OBJECT_BYTES));
  if (!raptorq || !(bytes > 0)) return;
  raptorq.__wbindgen_free(raptorq.__wbindgen_malloc(bytes), bytes);
}

/** One source block's symbols while they wait for decoding. */
interface BlockSymbols {
  /** Its source symbols K: RaptorQ needs at least this many distinct symbols of the block. */
  readonly sourceSymbols: number;
  /** Distinct symbols by encoding symbol id (a repeated one is counted, not kept twice). */
  readonly byId: Map<number, Uint8Array>;
}

/** Collects symbols of one object until it can be decoded. Call `free()` when done. */
export class ObjectFecDecoder {
  readonly info: TransmissionInfo;
  private blocks: BlockSymbols[];
  /** Source blocks with fewer distinct symbols than source symbols: no decoding is tried before 0. */
  private blocksShort: number;
  private result: Uint8Array | null = null;
  /** Symbols given to the decoder, per source block. */
  private readonly perBlock: Uint32Array;
  /** Symbols a source block keeps at most (its source and every repair symbol the origin may send). */
  readonly symbolsPerBlockLimit: number;
  symbolsReceived = 0;
  /**
   * Symbols dropped: unusable (the wrong size, a source block the object does not have) or
   * beyond what their block can use (`symbolsPerBlockLimit`).
   */
  symbolsRejected = 0;
  /** Times the wasm decoder was run: once per object unless the first symbols were not enough. */
  decodeAttempts = 0;

  /**
   * @param maxTransferLength the largest object the client accepts for this request: a larger
   *   OTI transfer length is refused before anything is kept for it (throws `OtiError`)
   */
  constructor(oti: Uint8Array, maxTransferLength: number) {
    const layout = checkOti(oti, maxTransferLength);
    this.info = layout.info;
    this.perBlock = new Uint32Array(this.info.sourceBlocks);
    this.symbolsPerBlockLimit = usefulSymbolsPerBlock(layout.largestBlock);
    // RFC 6330 §4.4.1.2 partitioning: the first Kt mod Z blocks (all of them when Z divides Kt)
    // have the larger count.
    const { sourceSymbols, largestBlock } = layout;
    const largerBlocks = sourceSymbols - (largestBlock - 1) * this.info.sourceBlocks;
    this.blocks = Array.from({ length: this.info.sourceBlocks }, (_, i) => ({
      sourceSymbols: i < largerBlocks ? largestBlock : largestBlock - 1,
      byId: new Map<number, Uint8Array>(),
    }));
    this.blocksShort = this.blocks.length;
  }

  /** The object once decodable, else null. */
  get object(): Uint8Array | null {
    return this.result;
  }

  /**
   * Adds one serialized EncodingPacket (sbn | esi | symbol); returns the object when complete. A
   * symbol it cannot use (the wrong size, a source block the object does not have, one more than
   * its block can use) is dropped and counted: one bad datagram must not cost the object the
   * others can still recover — and the RaptorQ module indexes its blocks by that number.
   */
  push(packet: Uint8Array): Uint8Array | null {
    if (this.result || this.blocks.length === 0) return this.result;
    const block = packet[0];
    if (packet.length !== 4 + this.info.symbolSize || block >= this.info.sourceBlocks || this.perBlock[block] >= this.symbolsPerBlockLimit) {
      this.symbolsRejected++;
      return null;
    }
    this.perBlock[block]++;
    this.symbolsReceived++;
    const kept = this.blocks[block];
    const id = packetSymbolId(packet);
    if (kept.byId.has(id)) return null; // the same symbol again adds nothing
    kept.byId.set(id, packet);
    if (kept.byId.size === kept.sourceSymbols) this.blocksShort--;
    if (this.blocksShort > 0) return null;
    return this.decode();
  }

  /**
   * Runs RaptorQ over every symbol kept, source symbols first (all of a block's source symbols
   * need no solving), and frees its wasm memory before returning. When the symbols were not
   * enough (a few per cent of the time with exactly K, some repair among them), the next symbol
   * tries again.
   */
  private decode(): Uint8Array | null {
    this.decodeAttempts++;
    const decoder = Decoder.with_defaults(BigInt(this.info.transferLength), this.info.symbolSize);
    try {
      for (const { sourceSymbols, byId } of this.blocks) {
        const ordered = [...byId].sort(([a], [b]) => (a < sourceSymbols ? 0 : 1) - (b < sourceSymbols ? 0 : 1));
        for (const [, packet] of ordered) {
          const decoded = decoder.decode(packet);
          if (decoded) {
            this.result = decoded;
            this.free();
            return decoded;
          }
        }
      }
      return null;
    } finally {
      decoder.free();
    }
  }

  /** Drops the symbols kept (the object decoded, was given up, or failed). */
  free(): void {
    this.blocks = [];
  }
}
