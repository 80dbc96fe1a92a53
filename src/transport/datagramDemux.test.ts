import { describe, expect, it } from 'vitest';
import { writeVarint } from './codec';
import { DatagramDemux, type DatagramSink, EARLY_PACKETS_LIMIT } from './datagramDemux';

/** A datagram payload: request id, then a RaptorQ packet (sbn u8 | esi u24 | one symbol byte). */
function datagram(requestId: number, block: number, esi: number): Uint8Array {
  const bytes: number[] = [];
  writeVarint(bytes, requestId);
  bytes.push(block, (esi >> 16) & 0xff, (esi >> 8) & 0xff, esi & 0xff, 0xaa);
  return Uint8Array.from(bytes);
}

/** A sink that records (block, esi) of what it is given. */
function recorder(): DatagramSink & { got: Array<[number, number]> } {
  const got: Array<[number, number]> = [];
  return { got, onPacket: (_packet, block, esi) => got.push([block, esi]) };
}

describe('DatagramDemux', () => {
  it('gives each datagram to its own request, with the packet as the decoder takes it', () => {
    const demux = new DatagramDemux();
    const a = recorder();
    const b = recorder();
    demux.attach(1, a);
    demux.attach(300, b);
    demux.accept(datagram(1, 0, 5));
    demux.accept(datagram(300, 2, 70_000));
    demux.accept(datagram(1, 0, 6));
    expect(a.got).toEqual([[0, 5], [0, 6]]);
    expect(b.got).toEqual([[2, 70_000]]);
    expect(demux.dropped).toBe(0);
  });

  it('holds symbols that come before their RESPONSE and hands them over once', () => {
    const demux = new DatagramDemux();
    demux.expect(4);
    demux.accept(datagram(4, 0, 0));
    demux.accept(datagram(4, 0, 1));
    const early = demux.attach(4, recorder());
    expect(early.map((p) => p[3])).toEqual([0, 1]);
    expect(early[0]).toEqual(Uint8Array.from([0, 0, 0, 0, 0xaa]));
    expect(demux.attach(4, recorder())).toEqual([]);
    expect(demux.dropped).toBe(0);
  });

  it('drops what no open request takes: unknown ids, released requests, undecodable bytes', () => {
    const demux = new DatagramDemux();
    demux.accept(datagram(9, 0, 0));
    expect(demux.dropped).toBe(1);
    const sink = recorder();
    demux.attach(9, sink);
    demux.release(9);
    demux.accept(datagram(9, 0, 1));
    expect(sink.got).toEqual([]);
    expect(demux.dropped).toBe(2);
    demux.expect(10);
    demux.release(10);
    demux.accept(datagram(10, 0, 0));
    expect(demux.dropped).toBe(3);
    demux.accept(Uint8Array.from([1, 0, 0, 0])); // a packet shorter than its 4-byte id + 1
    expect(demux.dropped).toBe(4);
  });

  it('keeps receiving for everyone when one sink throws', () => {
    const demux = new DatagramDemux();
    const good = recorder();
    demux.attach(1, { onPacket: () => { throw new Error('progress callback failed'); } });
    demux.attach(2, good);
    demux.accept(datagram(1, 0, 0));
    demux.accept(datagram(2, 0, 0));
    expect(demux.dropped).toBe(1);
    expect(good.got).toEqual([[0, 0]]);
  });

  it(`holds at most ${EARLY_PACKETS_LIMIT} early symbols in all, and frees room as requests take theirs`, () => {
    const demux = new DatagramDemux();
    demux.expect(1);
    demux.expect(2);
    for (let i = 0; i < EARLY_PACKETS_LIMIT; i++) demux.accept(datagram(1, 0, i));
    demux.accept(datagram(2, 0, 0));
    expect(demux.dropped).toBe(1);
    expect(demux.attach(1, recorder())).toHaveLength(EARLY_PACKETS_LIMIT);
    demux.accept(datagram(2, 0, 1));
    expect(demux.attach(2, recorder()).map((p) => p[3])).toEqual([1]);
  });

  it('reads a session’s datagrams until it ends, telling of each arrival; a failing session ends reading quietly', async () => {
    const demux = new DatagramDemux();
    const sink = recorder();
    demux.attach(3, sink);
    let arrivals = 0;
    const ended = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(datagram(3, 0, 0));
        c.enqueue(Uint8Array.from([0x40])); // undecodable
        c.enqueue(datagram(3, 0, 1));
        c.close();
      },
    });
    await demux.read(ended, () => arrivals++);
    expect(arrivals).toBe(3);
    expect(sink.got).toEqual([[0, 0], [0, 1]]);
    expect(demux.dropped).toBe(1);
    let pulls = 0;
    const failed = new ReadableStream<Uint8Array>({
      pull(c) {
        if (pulls++ === 0) c.enqueue(datagram(3, 0, 2));
        else c.error(new Error('session closed'));
      },
    });
    await expect(demux.read(failed, () => arrivals++)).resolves.toBeUndefined();
    expect(sink.got).toHaveLength(3);
  });
});
