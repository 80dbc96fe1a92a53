/**
 * `DatagramDemux`: one session's datagrams, read as they arrive and handed to the request each
 * belongs to, by the request id that opens it (docs/protocol.md §3.1). Symbols that come before
 * their request's RESPONSE (the stream can be slower than the first datagrams) wait here until
 * the request takes them; a datagram that belongs to no open request is counted as dropped.
 * What a request does with its symbols is datagramObject.ts.
 */
import { decodeObjectDatagram } from './codec';

/** Per datagram request: where its symbols go while it is open. */
export interface DatagramSink {
  onPacket(packet: Uint8Array, block: number, esi: number): void;
}

/** Symbols held, over all requests, for requests whose RESPONSE has not come yet. */
export const EARLY_PACKETS_LIMIT = 4096;

export class DatagramDemux {
  private readonly sinks = new Map<number, DatagramSink>();
  /** Datagrams that arrived before their RESPONSE (the stream is slower than the first symbols). */
  private readonly early = new Map<number, Uint8Array[]>();
  private earlyCount = 0;
  /** Datagrams undecodable, for no open request, beyond the early limit, or refused by their sink. */
  dropped = 0;

  /**
   * Reads a session's datagrams until the session ends (its end is the session's business).
   * @param onArrival called for every datagram as it arrives, before it is decoded
   */
  async read(readable: ReadableStream<Uint8Array>, onArrival: () => void): Promise<void> {
    const reader = readable.getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        onArrival();
        this.accept(value);
      }
    } catch {
      // the session ended; the session handles it
    }
  }

  /** Routes one datagram payload to its request's sink, holds it for later, or drops it. */
  accept(payload: Uint8Array): void {
    let datagram;
    try {
      datagram = decodeObjectDatagram(payload);
    } catch {
      this.dropped++;
      return;
    }
    const sink = this.sinks.get(datagram.requestId);
    if (sink) {
      // One request's trouble (its progress callback, say) must not end reception for all.
      try {
        sink.onPacket(datagram.packet, datagram.sourceBlock, datagram.symbolId);
      } catch {
        this.dropped++;
      }
    } else if (this.early.has(datagram.requestId) && this.earlyCount < EARLY_PACKETS_LIMIT) {
      this.early.get(datagram.requestId)!.push(datagram.packet);
      this.earlyCount++;
    } else {
      this.dropped++;
    }
  }

  /** A datagram request is about to go out: hold its symbols until it takes them (`attach`). */
  expect(requestId: number): void {
    this.early.set(requestId, []);
  }

  /** The request's RESPONSE came: its symbols go to `sink` from now on. Returns those held for it. */
  attach(requestId: number, sink: DatagramSink): Uint8Array[] {
    this.sinks.set(requestId, sink);
    const early = this.early.get(requestId) ?? [];
    this.dropEarly(requestId);
    return early;
  }

  /** The request is over (delivered, failed or given up): its symbols are dropped from now on. */
  release(requestId: number): void {
    this.dropEarly(requestId);
    this.sinks.delete(requestId);
  }

  private dropEarly(requestId: number): void {
    const early = this.early.get(requestId);
    if (early) {
      this.earlyCount -= early.length;
      this.early.delete(requestId);
    }
  }
}
