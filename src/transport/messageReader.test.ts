import { describe, expect, it } from 'vitest';
import { encodeMessage } from './codec';
import { MessageReader } from './messageReader';

/** A stream reader that yields `chunks`, then waits for ever (the origin sends nothing more) or ends. */
function reader(chunks: Uint8Array[], end: boolean): ReadableStreamDefaultReader<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(c) {
      for (const chunk of chunks) c.enqueue(chunk);
      if (end) c.close();
    },
  }).getReader();
}

const sent = encodeMessage({ type: 'sent', symbolsSent: 300, nextEsi: 301 });
const response = encodeMessage({ type: 'response', status: 200, delivery: 'reliable', objectLength: 6 });

describe('MessageReader', () => {
  it('reads messages however the stream cuts them, then null at its end', async () => {
    const bytes = Uint8Array.from([...sent, ...sent]);
    let arrivals = 0;
    const messages = new MessageReader(reader([bytes.subarray(0, 1), bytes.subarray(1, sent.length + 2), bytes.subarray(sent.length + 2)], true), () => arrivals++);
    expect(await messages.next()).toEqual({ type: 'sent', symbolsSent: 300, nextEsi: 301 });
    expect(await messages.next()).toEqual({ type: 'sent', symbolsSent: 300, nextEsi: 301 });
    expect(await messages.next()).toBeNull();
    expect(arrivals).toBe(3);
  });

  it('reads raw object bytes after a RESPONSE, starting with those that came in its chunk', async () => {
    const messages = new MessageReader(reader([Uint8Array.from([...response, 1, 2]), Uint8Array.from([3, 4, 5, 6, 7])], true));
    expect(await messages.next()).toMatchObject({ type: 'response', objectLength: 6 });
    const progress: number[] = [];
    expect(await messages.readRaw(6, undefined, (n) => progress.push(n))).toEqual(Uint8Array.from([1, 2, 3, 4, 5, 6]));
    expect(progress).toEqual([6]);
    expect(await new MessageReader(reader([Uint8Array.from([1, 2])], true)).readRaw(3, undefined, () => {})).toBeNull();
  });

  it('gives up waiting as soon as the signal aborts', async () => {
    const abort = new AbortController();
    const messages = new MessageReader(reader([response.subarray(0, 2)], false));
    const next = messages.next(abort.signal);
    setTimeout(() => abort.abort(), 5);
    expect(await next).toBeNull();
    const raw = new MessageReader(reader([], false)).readRaw(4, abort.signal, () => {});
    expect(await raw).toBeNull();
  });
});
