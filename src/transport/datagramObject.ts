/**
 * `receiveDatagramObject`: one object delivered as RaptorQ datagrams (docs/protocol.md §3) — its
 * symbols, from the demux (datagramDemux.ts) or as SYMBOL on its stream, fed to the FEC decoder
 * until the object decodes, the deadline passes, the request is cancelled or the origin ends it;
 * repair asked for on demand (REPAIR) once everything planned has left the origin; and the
 * delivery's datagram losses measured for the session's loss estimate (loss.ts).
 *
 * It does no I/O of its own: the session, the request stream's messages and writer, and the
 * decoder come in as the small interfaces below, so it is tested without a browser.
 */
import type { FecWorkerClient } from '../fec/client';
import { checkOti, MAX_SOURCE_BLOCK_SYMBOLS, OtiError, usefulSymbolsPerBlock } from '../fec/oti';
import { packetSourceBlock, packetSymbolId } from '../fec/packet';
import { encodeMessage, type Message, type ResponseMessage } from './codec';
import type { DatagramDemux } from './datagramDemux';
import { countLosses, datagramObservation, type LossEstimator, sendingIndex } from './loss';
import type { DeliveryStats, ObjectRequest, ObjectResult } from './types';

/** Extra repair symbols asked for beyond the measured shortfall. */
export const REPAIR_MARGIN = 2;

/** The RaptorQ decoder as the receiver uses it (the worker's client, fec/client.ts). */
export type FecDecoder = Pick<FecWorkerClient, 'open' | 'push' | 'close'>;

/** What receiving an object takes from its WebTransport session. */
export interface DatagramSession {
  /** Where the session's datagrams are sorted by request. */
  readonly demux: DatagramDemux;
  /** The session's decoder, taken when the RESPONSE comes. */
  fec(): FecDecoder;
  /** The path's round trip (src/transport/pathRtt.ts): symbols still in flight arrive within about one. */
  readonly rtt: { readonly ms: number };
  /** Takes what this delivery saw of datagram loss. */
  readonly loss: Pick<LossEstimator, 'observe'>;
}

/** The request stream while symbols come: messages in (SENT, SYMBOL, END), REPAIR, CANCEL and FIN out. */
export interface DatagramRequestStream {
  messages: { next(): Promise<Message | null> };
  writer: Pick<WritableStreamDefaultWriter<Uint8Array>, 'write' | 'close'>;
}

/** A datagram RESPONSE: the object's FEC parameters and how many symbols the origin plans to send. */
export type DatagramResponse = Extract<ResponseMessage, { delivery: 'datagram' }>;

/**
 * Why a datagram RESPONSE is refused, or null: its OTI must pass RFC 6330's limits and the
 * request's object size limit (fec/oti.ts), and agree with the RESPONSE's own fields — the
 * transfer length is the object length, K is ⌈F / T⌉, block 0's K' is a valid extended size and
 * the planned repair is no more than the protocol allows. Checked before the FEC worker is asked
 * to allocate anything for the object.
 */
export function datagramResponseRefusal(response: DatagramResponse, maxObjectBytes: number): string | null {
  let layout;
  try {
    layout = checkOti(response.oti, maxObjectBytes);
  } catch (e) {
    if (e instanceof OtiError) return e.message;
    throw e;
  }
  const { info, sourceSymbols, largestBlock } = layout;
  if (info.transferLength !== response.objectLength) return `OTI transfer length ${info.transferLength} is not the object length ${response.objectLength}`;
  if (response.sourceSymbols !== sourceSymbols) return `RESPONSE says ${response.sourceSymbols} source symbols, the OTI ${sourceSymbols}`;
  if (response.firstRepairEsi < largestBlock || response.firstRepairEsi > MAX_SOURCE_BLOCK_SYMBOLS) {
    return `first repair ESI ${response.firstRepairEsi} is not an extended source block size for ${sourceSymbols} symbols`;
  }
  if (response.plannedRepair > usefulSymbolsPerBlock(largestBlock) - largestBlock) return `${response.plannedRepair} repair symbols planned per block of ${largestBlock}`;
  return null;
}

/**
 * Receives request `requestId`'s object after its datagram RESPONSE (checked already:
 * `datagramResponseRefusal`); fills in `stats`' symbol and loss fields. The FEC worker refuses
 * an object larger than `maxObjectBytes` too, and keeps no more symbols than it can use. Resolves (never rejects for the network's sake) with the object or the reason it
 * did not come: 408 for a passed deadline, 0 for a cancelled request.
 */
export async function receiveDatagramObject(
  session: DatagramSession,
  requestId: number,
  response: DatagramResponse,
  request: ObjectRequest,
  stats: DeliveryStats,
  { messages, writer }: DatagramRequestStream,
  maxObjectBytes: number,
): Promise<ObjectResult> {
  const fec = session.fec();
  const symbolSize = (response.oti[6] << 8) | response.oti[7];
  const blocks = Math.max(1, response.oti[8]);
  stats.symbolSize = symbolSize;
  stats.sourceSymbols = response.sourceSymbols;
  stats.symbolsReceived = 0;
  stats.symbolsOnStream = 0;
  stats.repairRequests = 0;
  // Block 0's symbols that arrived, by position in sending order: the gaps are the losses. A
  // SYMBOL on the stream was taken from ahead of the datagrams still queued at the origin, so
  // only datagrams say how far sending has got (`lastDatagram`) and stream ones leave the count.
  const arrivedBlock0 = new Set<number>();
  const streamBlock0: number[] = [];
  let lastDatagram = -1;
  // When the last symbol arrived: the end of the link's work for this object. An object that
  // could not be recovered settles only at its deadline, seconds later; counting that wait as
  // link time made the throughput estimate of every datagram mode read a fraction of the link.
  let lastPacketAt: number | undefined;
  const decoded = fec.open(requestId, response.oti, maxObjectBytes);
  decoded.catch(() => undefined);
  const onPacket = (packet: Uint8Array, block: number, esi: number, byStream = false) => {
    stats.symbolsReceived!++;
    lastPacketAt = performance.now();
    if (byStream) stats.symbolsOnStream!++;
    stats.receivedBytes += packet.length;
    const index = block === 0 ? sendingIndex(esi, response.sourceSymbols, response.firstRepairEsi) : null;
    if (index !== null && byStream) streamBlock0.push(index);
    else if (index !== null) {
      arrivedBlock0.add(index);
      lastDatagram = Math.max(lastDatagram, index);
    }
    // Every symbol's bytes, repair ones past the object's length too: the link carried them
    // (the throughput estimate counts what arrived, src/link/arrivals.ts).
    request.onProgress?.(stats.receivedBytes, response.objectLength);
    fec.push(requestId, packet);
  };
  const early = session.demux.attach(requestId, { onPacket: (p, b, e) => onPacket(p, b, e) });
  for (const packet of early) onPacket(packet, packetSourceBlock(packet), packetSymbolId(packet));

  const deadlineAt = request.deadlineMs ? stats.requestedAt + request.deadlineMs : Infinity;
  let symbolsSent = 0;
  // What the origin will send unprompted, then what we asked for: repair is asked for only once
  // all of it has left the origin (SENT comes per batch; asking after an early batch would
  // request symbols that are already on their way).
  let expectedSymbols = response.sourceSymbols + response.plannedRepair * blocks;
  let outcome: 'decoded' | 'deadline' | 'cancelled' | 'ended' | null = null;
  let object: Uint8Array | null = null;
  let repairTimer: ReturnType<typeof setTimeout> | null = null;
  let allPlannedSent = false;
  const settle = new Promise<void>((resolve) => {
    const finish = (o: typeof outcome) => {
      if (outcome === null) outcome = o;
      resolve();
    };
    decoded.then((bytes) => {
      object = bytes;
      finish('decoded');
    }, () => finish('ended'));
    if (Number.isFinite(deadlineAt)) setTimeout(() => finish('deadline'), Math.max(0, deadlineAt - performance.now()));
    request.signal?.addEventListener('abort', () => finish('cancelled'), { once: true });
    // Messages: SENT drives repair on demand, SYMBOL is one more symbol; END or FIN ends the request.
    void (async () => {
      for (;;) {
        const m = await messages.next().catch(() => null);
        if (!m) return finish('ended');
        if (m.type === 'sent') {
          symbolsSent = m.symbolsSent;
          stats.symbolsSent = symbolsSent;
          if (repairTimer) clearTimeout(repairTimer);
          if (symbolsSent < expectedSymbols) continue;
          if (!allPlannedSent) {
            allPlannedSent = true;
            request.onAllPlannedSent?.();
          }
          // Symbols still in flight arrive within about one RTT; ask for what is missing then.
          repairTimer = setTimeout(() => {
            if (outcome !== null) return;
            const timeLeft = deadlineAt - performance.now();
            if (timeLeft < 1.5 * session.rtt.ms) return;
            const shortfall = response.sourceSymbols + REPAIR_MARGIN * blocks - stats.symbolsReceived!;
            const perBlock = Math.min(65_535, Math.max(1, Math.ceil(Math.max(shortfall, blocks) / blocks) + REPAIR_MARGIN));
            stats.repairRequests!++;
            // Since the last symbol the link owed this object nothing: not link time (throughput.ts).
            if (lastPacketAt !== undefined) (stats.repairWaits ??= []).push([lastPacketAt, performance.now()]);
            expectedSymbols = symbolsSent + perBlock * blocks;
            writer.write(encodeMessage({ type: 'repair', symbols: perBlock })).catch(() => undefined);
          }, Math.max(30, 1.5 * session.rtt.ms));
        } else if (m.type === 'symbol') {
          onPacket(m.packet, packetSourceBlock(m.packet), packetSymbolId(m.packet), true);
        } else if (m.type === 'end') {
          symbolsSent = m.symbolsSent;
          stats.symbolsSent = symbolsSent;
          return finish('ended');
        }
      }
    })();
  });
  await settle;
  if (repairTimer) clearTimeout(repairTimer);
  // When the last symbol came; none when nothing did. A delivery that brought no byte measured no
  // link time: an object sent into an outage fails at its deadline, and its span from request to
  // failure read as seconds of a busy link carrying nothing (throughput.ts; on the LTE trace the
  // segments around the outage gave `adaptive`'s estimate 1.1–1.4 Mbit/s where `qr`'s read more).
  stats.lastByteAt = lastPacketAt;
  if (outcome === 'decoded') {
    // Our FIN tells the origin to stop and purge; it answers END.
    writer.close().catch(() => undefined);
  } else {
    fec.close(requestId);
    writer.write(encodeMessage({ type: 'cancel' })).then(() => writer.close()).catch(() => undefined);
  }
  if (blocks === 1 && lastDatagram >= 0) {
    // Symbols after the last datagram received are still in flight or were purged when we
    // stopped: only the span up to it says anything about loss. It is observed whether or not
    // SENT has come (objects decoded before it are the loss-free ones; leaving them out made
    // every estimate a pessimistic one).
    const last = lastDatagram;
    const observed = symbolsSent > 0 ? Math.min(symbolsSent, last + 1) : last + 1;
    const observation = datagramObservation(observed, arrivedBlock0, streamBlock0);
    session.loss.observe(observation);
    const losses = countLosses(observation);
    stats.symbolsObserved = observed;
    stats.symbolsLost = losses.lost;
    stats.lossBursts = losses.runs;
  }
  if (object) {
    stats.recovered = true;
    return { status: 200, bytes: object, stats };
  }
  const error = outcome === 'deadline' ? 'deadline passed before the object could be decoded'
    : outcome === 'cancelled' ? 'cancelled' : 'the origin ended the request before the object could be decoded';
  return { status: outcome === 'deadline' ? 408 : outcome === 'cancelled' ? 0 : 200, bytes: null, stats, error };
}
