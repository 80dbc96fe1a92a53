import { describe, expect, it } from 'vitest';
import {
  decodeMessage,
  decodeObjectDatagram,
  encodeMessage,
  type Message,
  ProtocolError,
  writeVarint,
} from './codec';

const hex = (s: string) => Uint8Array.from(s.split(/\s+/).filter(Boolean).map((b) => parseInt(b, 16)));

describe('protocol codec (docs/protocol.md §4 byte examples)', () => {
  it('encodes and decodes the REQUEST example', () => {
    const request: Message = {
      type: 'request',
      requestId: 7,
      delivery: 'datagram',
      urgency: 3,
      deadlineMs: 900,
      fecMode: 'planned',
      lossPpm: 20_000,
      burstMilli: 1500,
      overheadPermille: 0,
      path: '/content/a',
    };
    const bytes = hex('01 18 07 01 03 43 84 01 80 00 4e 20 45 dc 00 0a 2f 63 6f 6e 74 65 6e 74 2f 61');
    expect(encodeMessage(request)).toEqual(bytes);
    expect(decodeMessage(bytes)).toEqual({ message: request, consumed: bytes.length });
  });

  it('encodes and decodes the RESPONSE 404 example', () => {
    const response: Message = { type: 'response', status: 404, delivery: 'error', message: 'no such object' };
    const bytes = hex('10 11 41 94 00 6e 6f 20 73 75 63 68 20 6f 62 6a 65 63 74');
    expect(encodeMessage(response)).toEqual(bytes);
    expect(decodeMessage(bytes)).toEqual({ message: response, consumed: bytes.length });
  });

  it('decodes the datagram example', () => {
    const d = decodeObjectDatagram(hex('07 00 00 01 02 aa bb'));
    expect([d.requestId, d.sourceBlock, d.symbolId]).toEqual([7, 0, 258]);
    expect(d.packet.subarray(4)).toEqual(hex('aa bb'));
  });

  it('encodes and decodes the SYMBOL example (the datagram example on the request stream)', () => {
    const symbol: Message = { type: 'symbol', packet: hex('00 00 01 02 aa bb') };
    const bytes = hex('13 06 00 00 01 02 aa bb');
    expect(encodeMessage(symbol)).toEqual(bytes);
    expect(decodeMessage(bytes)).toEqual({ message: symbol, consumed: bytes.length });
    expect(() => decodeMessage(hex('13 04 00 00 01 02'))).toThrow(ProtocolError);
  });
});

describe('protocol codec behaviour', () => {
  it('writes RFC 9000 varint samples', () => {
    const out: number[] = [];
    writeVarint(out, 494_878_333);
    writeVarint(out, 15_293);
    writeVarint(out, 37);
    expect(Uint8Array.from(out)).toEqual(hex('9d 7f 3e 7d 7b bd 25'));
  });

  it('round-trips every message type', () => {
    const messages: Message[] = [
      { type: 'repair', symbols: 12 },
      { type: 'cancel' },
      { type: 'response', status: 200, delivery: 'reliable', objectLength: 5_000_000 },
      {
        type: 'response',
        status: 200,
        delivery: 'datagram',
        objectLength: 70_000,
        oti: Uint8Array.from({ length: 12 }, (_, i) => i + 1),
        sourceSymbols: 55,
        plannedRepair: 4,
        firstRepairEsi: 56,
      },
      { type: 'sent', symbolsSent: 1000, nextEsi: 70 },
      { type: 'end', reason: 'deadline-passed', symbolsSent: 9, purged: 3 },
    ];
    for (const m of messages) {
      const bytes = encodeMessage(m);
      expect(decodeMessage(bytes)).toEqual({ message: m, consumed: bytes.length });
    }
  });

  it('asks for more bytes on every truncation of a frame', () => {
    const bytes = encodeMessage({ type: 'sent', symbolsSent: 1000, nextEsi: 70 });
    for (let cut = 0; cut < bytes.length; cut++) expect(decodeMessage(bytes.subarray(0, cut))).toBeNull();
  });

  it('rejects invalid fields with a ProtocolError', () => {
    for (const bad of ['01 05 07 00 09 00 00', '02 01 00', '3f 00', '11 80 01 00 00', '12 03 07 00 00']) {
      expect(() => decodeMessage(hex(bad)), bad).toThrow(ProtocolError);
    }
    expect(() => decodeObjectDatagram(hex('07 00 00'))).toThrow(ProtocolError);
  });

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
