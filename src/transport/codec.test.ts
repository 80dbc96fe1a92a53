import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  ByteReader,
  decodeMessage,
  decodeObjectDatagram,
  encodeMessage,
  type Message,
  ProtocolError,
  writeVarint,
} from './codec';

/** One entry of docs/vectors/protocol.json: fields named as in docs/protocol.md, bytes in hex. */
interface Vector {
  name: string;
  type?: string;
  fields?: Record<string, unknown>;
  hex: string;
  value?: string;
  decodeOnly?: boolean;
}

const vectors = JSON.parse(readFileSync(new URL('../../docs/vectors/protocol.json', import.meta.url), 'utf8')) as Record<
  'messages' | 'datagrams' | 'varints' | 'invalidMessages' | 'invalidDatagrams',
  Vector[]
>;

const hex = (s: string) => Uint8Array.from(s.split(/\s+/).filter(Boolean).map((b) => parseInt(b, 16)));

/** Byte fields of the vectors, carried as hex; every other field is a number or a string. */
const BYTE_FIELDS = new Set(['oti', 'packet']);

/** The vector's fields in the codec's shape: camelCase names (`request_id` → `requestId`), bytes as Uint8Array. */
function codecFields(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(fields).map(([name, value]) => [
      name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()),
      BYTE_FIELDS.has(name) ? hex(value as string) : value,
    ]),
  );
}

describe('protocol codec on the shared vectors (docs/vectors/protocol.json)', () => {
  it.each(vectors.messages)('encodes and decodes $name', ({ type, fields, hex: bytes }) => {
    const message = { type, ...codecFields(fields!) } as Message;
    const encoded = hex(bytes);
    expect(encodeMessage(message)).toEqual(encoded);
    expect(decodeMessage(encoded)).toEqual({ message, consumed: encoded.length });
    // Every cut of a frame asks for more bytes rather than failing.
    for (let cut = 0; cut < encoded.length; cut++) expect(decodeMessage(encoded.subarray(0, cut))).toBeNull();
  });

  it.each(vectors.datagrams)('decodes the datagram $name', ({ fields, hex: bytes }) => {
    expect(decodeObjectDatagram(hex(bytes))).toEqual(codecFields(fields!));
  });

  it.each(vectors.varints)('writes and reads the varint $name', ({ value, hex: bytes, decodeOnly }) => {
    const encoded = hex(bytes);
    if (BigInt(value!) > BigInt(Number.MAX_SAFE_INTEGER)) {
      // The codec keeps values below 2^53 so they fit a JS number; larger ones are refused.
      expect(() => new ByteReader(encoded).varint()).toThrow(ProtocolError);
      return;
    }
    const reader = new ByteReader(encoded);
    expect(reader.varint()).toBe(Number(value));
    expect(reader.position).toBe(encoded.length);
    if (!decodeOnly) {
      const out: number[] = [];
      writeVarint(out, Number(value));
      expect(Uint8Array.from(out)).toEqual(encoded);
    }
  });

  it.each(vectors.invalidMessages)('refuses $name', ({ hex: bytes }) => {
    expect(() => decodeMessage(hex(bytes))).toThrow(ProtocolError);
  });

  it.each(vectors.invalidDatagrams)('refuses the datagram $name', ({ hex: bytes }) => {
    expect(() => decodeObjectDatagram(hex(bytes))).toThrow(ProtocolError);
  });
});

describe('protocol codec behaviour', () => {
  it('never throws anything but ProtocolError on random bytes', () => {
    let seed = 12345;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % 256;
    for (let i = 0; i < 20_000; i++) {
      const bytes = Uint8Array.from({ length: next() % 40 }, next);
      for (const decode of [decodeMessage, decodeObjectDatagram]) {
        try {
          decode(bytes);
        } catch (e) {
          expect(e).toBeInstanceOf(ProtocolError);
        }
      }
    }
  });
});
