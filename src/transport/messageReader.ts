/**
 * `MessageReader`: reads one request stream — framed protocol messages (docs/protocol.md §3), then,
 * for a reliable response, the object's raw bytes — and gives up at once when the request's signal
 * aborts. It only reads: closing the stream is the caller's business (requestStream.ts).
 */
import { decodeMessage, type Message } from './codec';

/** Reads framed messages, then (for reliable responses) raw object bytes, from a request stream. */
export class MessageReader {
  private buffer = new Uint8Array(0);
  private ended = false;

  /** @param onBytes called whenever bytes arrive on the stream */
  constructor(private readonly reader: ReadableStreamDefaultReader<Uint8Array>, private readonly onBytes: () => void = () => {}) {}

  private async fill(signal?: AbortSignal): Promise<boolean> {
    if (this.ended) return false;
    const read = this.reader.read();
    const chunk = signal ? await abortable(read, signal) : await read;
    if (!chunk || chunk.done) {
      this.ended = true;
      return false;
    }
    this.onBytes();
    const merged = new Uint8Array(this.buffer.length + chunk.value.length);
    merged.set(this.buffer);
    merged.set(chunk.value, this.buffer.length);
    this.buffer = merged;
    return true;
  }

  /** The next message, or null at the end of the stream (or on abort). */
  async next(signal?: AbortSignal): Promise<Message | null> {
    for (;;) {
      const decoded = decodeMessage(this.buffer);
      if (decoded) {
        this.buffer = this.buffer.subarray(decoded.consumed);
        return decoded.message;
      }
      if (!(await this.fill(signal))) return null;
    }
  }

  /** Exactly `length` raw bytes (or null if the stream ends first or the signal aborts). */
  async readRaw(length: number, signal: AbortSignal | undefined, progress: (n: number) => void): Promise<Uint8Array | null> {
    const out = new Uint8Array(length);
    let have = Math.min(length, this.buffer.length);
    out.set(this.buffer.subarray(0, have));
    this.buffer = this.buffer.subarray(have);
    while (have < length) {
      // Given up: the caller stops the stream both ways.
      if (signal?.aborted) return null;
      const read = this.reader.read();
      const chunk = signal ? await abortable(read, signal) : await read;
      if (!chunk || chunk.done) return null;
      this.onBytes();
      const take = Math.min(chunk.value.length, length - have);
      out.set(chunk.value.subarray(0, take), have);
      have += take;
      progress(have);
    }
    return out;
  }
}

/** Resolves with the promise's value, or null as soon as the signal aborts. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | null> {
  if (signal.aborted) return Promise.resolve(null);
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve(null);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then((v) => {
      signal.removeEventListener('abort', onAbort);
      resolve(v);
    }, (e) => {
      signal.removeEventListener('abort', onAbort);
      reject(e);
    });
  });
}
