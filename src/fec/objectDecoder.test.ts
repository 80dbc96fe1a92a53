import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { Encoder } from 'raptorq';
import { loadRaptorq, ObjectFecDecoder, raptorqMemoryBytes } from './objectDecoder';
import { checkOti, OtiError, parseOti } from './oti';

const SYMBOL = 1200;
/** The object size these tests accept (the protocol's default cap, 64 MiB). */
const LIMIT = 64 * 2 ** 20;

/** OTI as the Rust crate's with_defaults writes it for one source block (one sub-block unless told). */
function otiFor(length: number, symbolSize: number, subBlocks = 1): Uint8Array {
  const oti = new Uint8Array(12);
  for (let i = 4, v = length; i >= 0; i--, v = Math.floor(v / 256)) oti[i] = v % 256;
  oti[6] = symbolSize >> 8;
  oti[7] = symbolSize & 0xff;
  oti[8] = 1;
  oti[10] = subBlocks;
  oti[11] = 8;
  return oti;
}

function randomBytes(n: number, seed: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = (seed = (seed * 1103515245 + 12345) % 2 ** 31) & 0xff;
  return out;
}

beforeAll(async () => {
  const pkg = dirname(createRequire(import.meta.url).resolve('raptorq/package.json'));
  await loadRaptorq(readFileSync(join(pkg, 'raptorq_bg.wasm')));
});

describe('ObjectFecDecoder', () => {
  it('parses the OTI fields', () => {
    expect(parseOti(otiFor(70_000, SYMBOL))).toEqual({
      transferLength: 70_000,
      symbolSize: SYMBOL,
      sourceBlocks: 1,
      subBlocks: 1,
      alignment: 8,
    });
  });

  it('accepts the sub-blocked OTI of objects over ~10 MB and rejects an impossible one', () => {
    // 12 MB at 1280-byte symbols: with_defaults gives two sub-blocks per source block, on both
    // sides (the origin's layout is checked by its own decode test, symbols.rs).
    expect(() => new ObjectFecDecoder(otiFor(12_000_000, 1280, 2), LIMIT).free()).not.toThrow();
    expect(() => new ObjectFecDecoder(otiFor(12_000_000, 1280, 0), LIMIT)).toThrow(/OTI refused: 0 sub-blocks/);
  });

  it('recovers an object from source and repair symbols despite lost datagrams', () => {
    const object = randomBytes(100_000, 7);
    const packets = Encoder.with_defaults(object, SYMBOL).encode(15);
    const k = Math.ceil(object.length / SYMBOL);
    expect(packets.length).toBe(k + 15);
    const decoder = new ObjectFecDecoder(otiFor(object.length, SYMBOL), LIMIT);
    // lose a burst of 10 source symbols: the repair symbols make up for it
    let result: Uint8Array | null = null;
    packets.forEach((p, i) => {
      if (i < 20 || i >= 30) result = decoder.push(p) ?? result;
    });
    expect(result).toEqual(object);
    expect(decoder.symbolsReceived).toBeLessThanOrEqual(k + 2);
  });

  it("decodes the origin encoder's packets (docs/vectors/raptorq.json), repair symbols included", () => {
    const vector = JSON.parse(readFileSync(new URL('../../docs/vectors/raptorq.json', import.meta.url), 'utf8')) as {
      objectLength: number; oti: string; object: string; packets: string[];
    };
    const decoder = new ObjectFecDecoder(Buffer.from(vector.oti, 'hex'), LIMIT);
    let result: Uint8Array | null = null;
    for (const packet of vector.packets) result = decoder.push(Buffer.from(packet, 'hex')) ?? result;
    expect(result).not.toBeNull();
    expect(Buffer.from(result!).toString('hex')).toBe(vector.object);
  });

  it('cannot recover without enough symbols', () => {
    const object = randomBytes(50_000, 3);
    const packets = Encoder.with_defaults(object, SYMBOL).encode(0);
    const decoder = new ObjectFecDecoder(otiFor(object.length, SYMBOL), LIMIT);
    for (const p of packets.slice(1)) expect(decoder.push(p)).toBeNull();
    expect(decoder.object).toBeNull();
    decoder.free();
  });

  it('drops symbols it cannot use and rejects OTIs it cannot rebuild', () => {
    const decoder = new ObjectFecDecoder(otiFor(10_000, SYMBOL), LIMIT);
    expect(decoder.push(new Uint8Array(100))).toBeNull(); // the wrong size
    const otherBlock = new Uint8Array(4 + SYMBOL);
    otherBlock[0] = 3; // the object has one source block
    expect(decoder.push(otherBlock)).toBeNull();
    expect(decoder.symbolsRejected).toBe(2);
    expect(decoder.symbolsReceived).toBe(0);
    decoder.free();
    expect(() => new ObjectFecDecoder(new Uint8Array(11), LIMIT)).toThrow(RangeError);
    expect(() => new ObjectFecDecoder(otiFor(10_000, 1201), LIMIT)).toThrow(RangeError);
  });
});

describe('ObjectFecDecoder under a hostile origin', () => {
  /** An OTI with every field given, as a hostile origin could write it. */
  function rawOti(f: { length: number; symbolSize: number; blocks: number; subBlocks: number; alignment: number }): Uint8Array {
    const oti = otiFor(f.length, f.symbolSize, f.subBlocks);
    oti[8] = f.blocks;
    oti[11] = f.alignment;
    return oti;
  }

  it('refuses a transfer length above the accepted size before allocating anything', () => {
    const before = raptorqMemoryBytes();
    // 4 GiB claimed for an object the request accepts 1 MiB of.
    expect(() => new ObjectFecDecoder(otiFor(4 * 2 ** 30, 1280), 2 ** 20)).toThrow(OtiError);
    expect(() => new ObjectFecDecoder(otiFor(4 * 2 ** 30, 1280), 2 ** 20)).toThrow(/transfer length 4294967296 above the 1048576-byte limit/);
    // 200 MiB claimed, accepted by the request (the old code's only check): still refused above the protocol's cap.
    expect(() => new ObjectFecDecoder(otiFor(200 * 2 ** 20, 1280), LIMIT)).toThrow(OtiError);
    expect(raptorqMemoryBytes() - before).toBeLessThanOrEqual(1 << 20);
  });

  it('refuses absurd symbol counts and layouts RFC 6330 does not allow', () => {
    const before = raptorqMemoryBytes();
    const refuse = (f: Parameters<typeof rawOti>[0], why: RegExp) => expect(() => new ObjectFecDecoder(rawOti(f), LIMIT)).toThrow(why);
    // 64 MiB in 64-byte symbols in one block: a million symbols, RFC 6330 stops at 56 403 a block.
    refuse({ length: LIMIT, symbolSize: 64, blocks: 1, subBlocks: 1, alignment: 8 }, /1048576 symbols in a source block/);
    // Tiny symbols multiply the per-symbol bookkeeping: refused below 64 bytes.
    refuse({ length: 1_000_000, symbolSize: 8, blocks: 255, subBlocks: 1, alignment: 8 }, /symbol size 8/);
    // More source blocks than source symbols, sub-symbols smaller than the alignment, a zero alignment.
    refuse({ length: 1_000, symbolSize: 1200, blocks: 200, subBlocks: 1, alignment: 8 }, /200 source blocks for 1 source symbols/);
    refuse({ length: 100_000, symbolSize: 1200, blocks: 1, subBlocks: 151, alignment: 8 }, /151 sub-blocks/);
    refuse({ length: 100_000, symbolSize: 1200, blocks: 1, subBlocks: 1, alignment: 0 }, /alignment 0/);
    refuse({ length: 0, symbolSize: 1200, blocks: 1, subBlocks: 1, alignment: 8 }, /empty object/);
    expect(raptorqMemoryBytes() - before).toBeLessThanOrEqual(1 << 20);
    // What the origin sends passes: every OTI its test vector and with_defaults write.
    expect(checkOti(otiFor(12_000_000, 1280, 2), LIMIT)).toMatchObject({ sourceSymbols: 9375, largestBlock: 9375 });
  });

  it('keeps at most what a source block can use and drops the rest', () => {
    const object = randomBytes(12_000, 5);
    const k = Math.ceil(object.length / SYMBOL);
    const packets = Encoder.with_defaults(object, SYMBOL).encode(0);
    const decoder = new ObjectFecDecoder(otiFor(object.length, SYMBOL), LIMIT);
    // The same symbol a thousand times never decodes; only what K + max(2K, 32) allows is kept.
    for (let i = 0; i < 1000; i++) expect(decoder.push(packets[0])).toBeNull();
    expect(decoder.symbolsPerBlockLimit).toBe(k + 32);
    expect(decoder.symbolsReceived).toBe(k + 32);
    expect(decoder.symbolsRejected).toBe(1000 - (k + 32));
    decoder.free();
  });
});
