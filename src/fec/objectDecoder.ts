/**
 * RaptorQ (RFC 6330) reassembly of one object from its datagram symbols, on npm `raptorq` (the
 * Rust `raptorq` crate compiled to wasm, the same library the origin encodes with).
 *
 * The origin derives its object transmission information (OTI) as raptorq's
 * `with_defaults(object_length, symbol_size)`; npm `raptorq` only offers that constructor, so we
 * rebuild the same decoder from the two numbers and check the rest of the OTI agrees.
 *
 * Memory is bounded before and while decoding: the OTI is checked (oti.ts) against the size the
 * client accepts for the object before the decoder exists, and each source block keeps at most
 * the symbols the origin can usefully send for it; the rest are dropped and counted.
 */
import initRaptorq, { Decoder, initSync } from 'raptorq';
import { checkOti, type TransmissionInfo, usefulSymbolsPerBlock } from './oti';

let ready: Promise<void> | null = null;
let memory: WebAssembly.Memory | null = null;

/**
 * Loads the raptorq wasm once. In the browser (and workers) it is fetched next to the module;
 * tests in Node pass the wasm bytes.
 */
export function loadRaptorq(wasmBytes?: BufferSource): Promise<void> {
  if (wasmBytes) {
    memory = initSync(wasmBytes).memory;
    ready = Promise.resolve();
  }
  ready ??= initRaptorq().then((exports) => void (memory = exports.memory));
  return ready;
}

/**
 * Bytes of the RaptorQ module's wasm memory (0 before it loaded). Wasm memory only grows, so this
 * is the most the FEC worker's decoders have ever held at once.
 */
export function raptorqMemoryBytes(): number {
  return memory?.buffer.byteLength ?? 0;
}

/** Collects symbols of one object until it can be decoded. Call `free()` when done. */
export class ObjectFecDecoder {
  readonly info: TransmissionInfo;
  private decoder: Decoder | null;
  private result: Uint8Array | null = null;
  /** Symbols given to the RaptorQ decoder, per source block. */
  private readonly perBlock: Uint32Array;
  /** Symbols a source block keeps at most (its source and every repair symbol the origin may send). */
  readonly symbolsPerBlockLimit: number;
  symbolsReceived = 0;
  /**
   * Symbols dropped: unusable (the wrong size, a source block the object does not have) or
   * beyond what their block can use (`symbolsPerBlockLimit`).
   */
  symbolsRejected = 0;

  /**
   * @param maxTransferLength the largest object the client accepts for this request: a larger
   *   OTI transfer length is refused before the decoder allocates anything (throws `OtiError`)
   */
  constructor(oti: Uint8Array, maxTransferLength: number) {
    const layout = checkOti(oti, maxTransferLength);
    this.info = layout.info;
    this.perBlock = new Uint32Array(this.info.sourceBlocks);
    this.symbolsPerBlockLimit = usefulSymbolsPerBlock(layout.largestBlock);
    // Sub-blocks (objects over ~10 MB) are fine: with_defaults derives the same count here.
    this.decoder = Decoder.with_defaults(BigInt(this.info.transferLength), this.info.symbolSize);
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
    if (this.result || !this.decoder) return this.result;
    const block = packet[0];
    if (packet.length !== 4 + this.info.symbolSize || block >= this.info.sourceBlocks || this.perBlock[block] >= this.symbolsPerBlockLimit) {
      this.symbolsRejected++;
      return null;
    }
    this.perBlock[block]++;
    this.symbolsReceived++;
    const decoded = this.decoder.decode(packet);
    if (decoded) {
      this.result = decoded;
      this.free();
    }
    return this.result;
  }

  free(): void {
    this.decoder?.free();
    this.decoder = null;
  }
}
