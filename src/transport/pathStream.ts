/**
 * The path stream's reader (docs/protocol.md §3.4): the origin opens one WebTransport
 * unidirectional stream per session and writes a PATH report on it every quarter second; each is
 * handed to `onReport` (the session's `PathRtt`, src/transport/pathRtt.ts). Any other message or
 * malformed bytes end the reading of that stream (the reports are advice, never needed).
 */
import type { PathReportFields } from './pathRtt';
import { MessageReader } from './messageReader';

/** Reads every unidirectional stream the origin opens on `wt` until the session ends. */
export async function readPathStreams(wt: WebTransport, onReport: (report: PathReportFields) => void): Promise<void> {
  const streams = wt.incomingUnidirectionalStreams.getReader();
  try {
    for (;;) {
      const { value, done } = await streams.read();
      if (done) return;
      void readReports(value as ReadableStream<Uint8Array>, onReport);
    }
  } catch {
    // the session ended
  }
}

async function readReports(stream: ReadableStream<Uint8Array>, onReport: (report: PathReportFields) => void): Promise<void> {
  const reader = stream.getReader();
  const messages = new MessageReader(reader);
  try {
    for (;;) {
      const message = await messages.next();
      if (!message || message.type !== 'path') return;
      onReport(message);
    }
  } catch {
    // malformed: stop listening to this stream
  } finally {
    void reader.cancel().catch(() => undefined);
  }
}
