import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { Encoder } from 'raptorq';
import { loadRaptorq, ObjectFecDecoder, parseOti } from './objectDecoder';

const SYMBOL = 1200;

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
    expect(() => new ObjectFecDecoder(otiFor(12_000_000, 1280, 2)).free()).not.toThrow();
    expect(() => new ObjectFecDecoder(otiFor(12_000_000, 1280, 0))).toThrow(/unsupported OTI/);
  });

  it('recovers an object from source and repair symbols despite lost datagrams', () => {
    const object = randomBytes(100_000, 7);
    const packets = Encoder.with_defaults(object, SYMBOL).encode(15);
    const k = Math.ceil(object.length / SYMBOL);
    expect(packets.length).toBe(k + 15);
    const decoder = new ObjectFecDecoder(otiFor(object.length, SYMBOL));
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
    const decoder = new ObjectFecDecoder(Buffer.from(vector.oti, 'hex'));
    let result: Uint8Array | null = null;
    for (const packet of vector.packets) result = decoder.push(Buffer.from(packet, 'hex')) ?? result;
    expect(result).not.toBeNull();
    expect(Buffer.from(result!).toString('hex')).toBe(vector.object);
  });

  it('cannot recover without enough symbols', () => {
    const object = randomBytes(50_000, 3);
    const packets = Encoder.with_defaults(object, SYMBOL).encode(0);
    const decoder = new ObjectFecDecoder(otiFor(object.length, SYMBOL));
    for (const p of packets.slice(1)) expect(decoder.push(p)).toBeNull();
    expect(decoder.object).toBeNull();
    decoder.free();
  });

  it('drops symbols it cannot use and rejects OTIs it cannot rebuild', () => {
    const decoder = new ObjectFecDecoder(otiFor(10_000, SYMBOL));
    expect(decoder.push(new Uint8Array(100))).toBeNull(); // the wrong size
    const otherBlock = new Uint8Array(4 + SYMBOL);
    otherBlock[0] = 3; // the object has one source block
    expect(decoder.push(otherBlock)).toBeNull();
    expect(decoder.symbolsRejected).toBe(2);
    expect(decoder.symbolsReceived).toBe(0);
    decoder.free();
    expect(() => new ObjectFecDecoder(new Uint8Array(11))).toThrow(RangeError);
    expect(() => new ObjectFecDecoder(otiFor(10_000, 1201))).toThrow(RangeError);
  });
});
