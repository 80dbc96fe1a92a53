/**
 * RaptorQ (RFC 6330) reassembly of one object from its datagram symbols, on npm `raptorq` (the
 * Rust `raptorq` crate compiled to wasm, the same library the origin encodes with).
 *
 * The origin derives its object transmission information (OTI) as raptorq's
 * `with_defaults(object_length, symbol_size)`; npm `raptorq` only offers that constructor, so we
 * rebuild the same decoder from the two numbers and check the rest of the OTI agrees.
 */
import initRaptorq, { Decoder, initSync } from 'raptorq';

let ready: Promise<void> | null = null;

/**
 * Loads the raptorq wasm once. In the browser (and workers) it is fetched next to the module;
 * tests in Node pass the wasm bytes.
 */
export function loadRaptorq(wasmBytes?: BufferSource): Promise<void> {
  if (wasmBytes) {
    initSync(wasmBytes);
    ready = Promise.resolve();
  }
  ready ??= initRaptorq().then(() => undefined);
  return ready;
}

/** RFC 6330 §3.3.2–3.3.3 object transmission information, 12 bytes. */
export interface TransmissionInfo {
  transferLength: number;
  symbolSize: number;
  sourceBlocks: number;
  subBlocks: number;
  alignment: number;
}

export function parseOti(oti: Uint8Array): TransmissionInfo {
  if (oti.length !== 12) throw new RangeError(`OTI must be 12 bytes, got ${oti.length}`);
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

/** Collects symbols of one object until it can be decoded. Call `free()` when done. */
export class ObjectFecDecoder {
  readonly info: TransmissionInfo;
  private decoder: Decoder | null;
  private result: Uint8Array | null = null;
  symbolsReceived = 0;
  /** Symbols dropped as unusable: the wrong size, or a source block the object does not have. */
  symbolsRejected = 0;

  constructor(oti: Uint8Array) {
    this.info = parseOti(oti);
    // Sub-blocks (objects over ~10 MB) are fine: with_defaults derives the same count here.
    const { symbolSize, alignment, subBlocks } = this.info;
    if (symbolSize === 0 || alignment === 0 || symbolSize % alignment !== 0 || subBlocks < 1) {
      throw new RangeError(`unsupported OTI: ${JSON.stringify(this.info)} (origin must use with_defaults)`);
    }
    this.decoder = Decoder.with_defaults(BigInt(this.info.transferLength), symbolSize);
  }

  /** The object once decodable, else null. */
  get object(): Uint8Array | null {
    return this.result;
  }

  /**
   * Adds one serialized EncodingPacket (sbn | esi | symbol); returns the object when complete. A
   * symbol it cannot use (the wrong size, a source block the object does not have) is dropped and
   * counted: one bad datagram must not cost the object the others can still recover — and the
   * RaptorQ module indexes its blocks by that number.
   */
  push(packet: Uint8Array): Uint8Array | null {
    if (this.result || !this.decoder) return this.result;
    if (packet.length !== 4 + this.info.symbolSize || packet[0] >= this.info.sourceBlocks) {
      this.symbolsRejected++;
      return null;
    }
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
