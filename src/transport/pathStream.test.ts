import { describe, expect, it } from 'vitest';
import type { PathReportFields } from './pathRtt';
import { encodeMessage } from './codec';
import { readPathStreams } from './pathStream';

const REPORT: PathReportFields = { smoothedRttUs: 102_345, minRttUs: 100_210, rttVarUs: 2_500, cwndBytes: 125_000, deliveryRateBytesPerS: 1_000_000 };

/** A unidirectional stream delivering `chunks`, then its end. */
function stream(chunks: Uint8Array[]): ReadableStream<Uint8Array> {
  return new ReadableStream({ start(c) { for (const chunk of chunks) c.enqueue(chunk); c.close(); } });
}

/** A session whose origin opens `streams`, then ends. */
function session(streams: ReadableStream<Uint8Array>[]): WebTransport {
  return { incomingUnidirectionalStreams: new ReadableStream({ start(c) { for (const s of streams) c.enqueue(s); c.close(); } }) } as unknown as WebTransport;
}

async function reportsFrom(streams: ReadableStream<Uint8Array>[]): Promise<PathReportFields[]> {
  const seen: PathReportFields[] = [];
  await readPathStreams(session(streams), (r) => seen.push(r));
  await new Promise((resolve) => setTimeout(resolve, 10)); // each stream is read on its own
  return seen;
}

describe('readPathStreams', () => {
  it('hands every PATH report of the path stream over, however the bytes are split', async () => {
    const one = encodeMessage({ type: 'path', ...REPORT });
    const two = encodeMessage({ type: 'path', ...REPORT, smoothedRttUs: 150_000 });
    const bytes = new Uint8Array([...one, ...two]);
    const seen = await reportsFrom([stream([bytes.subarray(0, 3), bytes.subarray(3, 25), bytes.subarray(25)])]);
    expect(seen.map((r) => r.smoothedRttUs)).toEqual([102_345, 150_000]);
    expect(seen[0]).toMatchObject(REPORT);
  });

  it('stops at a message that is not PATH or bytes that are not a message, keeping what came before', async () => {
    const path = encodeMessage({ type: 'path', ...REPORT });
    const seen = await reportsFrom([
      stream([path, encodeMessage({ type: 'sent', symbolsSent: 1, nextEsi: 1 }), path]),
      stream([path, Uint8Array.from([0x14, 0x08, 0x83, 0xa2, 0xc9, 0x40, 0, 0, 0, 0]), path]), // an RTT over 60 s
    ]);
    expect(seen).toHaveLength(2);
  });
});
