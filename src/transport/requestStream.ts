/**
 * One object request on its own bidirectional stream of a WebTransport session (docs/protocol.md
 * §3): REQUEST out; RESPONSE in (its wait is the session's RTT sample); then the object's bytes on
 * the stream, or its symbols as datagrams (datagramObject.ts). A request that ends without its
 * object stops the stream both ways, so the origin does not go on sending what nobody reads.
 * The RESPONSE's object size is checked against the request's limit (limits.ts) and a datagram
 * RESPONSE's OTI against RFC 6330 and itself, then the size is reserved in the in-flight budget
 * (budget.ts), all before anything is allocated for the object.
 */
import { type InFlightBudget, InFlightBudgetError, sharedInFlightBudget } from './budget';
import { encodeMessage, type FecMode, type RequestMessage, REQUEST_ID_LIMIT, type ResponseMessage } from './codec';
import { datagramResponseRefusal, type DatagramSession, receiveDatagramObject } from './datagramObject';
import { objectByteLimit, objectSizeRefusal } from './limits';
import type { LossEstimator } from './loss';
import { MessageReader } from './messageReader';
import type { PathRtt } from './pathRtt';
import type { DeliveryStats, ObjectRequest, ObjectResult } from './types';

/** What a request takes from its session: the datagram receiver's parts and the link estimates. */
export interface RequestSession extends DatagramSession {
  /** Takes each request's REQUEST → RESPONSE time. */
  readonly rtt: PathRtt;
  /** Its estimate goes out in every REQUEST, for the origin's repair planning. */
  readonly loss: LossEstimator;
  /** Where objects reserve their bytes while they arrive (default `sharedInFlightBudget`). */
  readonly budget?: InFlightBudget;
}

/** The request id after `id`: 1 … 2^32 − 1, then 1 again (0 is never used). */
export function nextRequestId(id: number): number {
  return (id % (REQUEST_ID_LIMIT - 1)) + 1;
}

/** A request that ended without its object. */
export function failure(stats: DeliveryStats, status: number, error: string): ObjectResult {
  return { status, bytes: null, stats, error };
}

/**
 * The REQUEST for `request`: its urgency and deadline as whole numbers in range, and its FEC
 * settings — by default repair planned from the session's measured loss, none when reliable.
 */
export function requestMessage(requestId: number, request: ObjectRequest, loss: LossEstimator): RequestMessage {
  const fec = request.fec ?? { kind: 'planned', lossRate: loss.estimate().rate };
  const measured = loss.wireFields();
  const fecMode: FecMode = request.delivery === 'reliable' ? 'none' : fec.kind;
  return {
    type: 'request', requestId, delivery: request.delivery, urgency: Math.max(0, Math.min(7, Math.round(request.urgency))),
    deadlineMs: Math.max(0, Math.round(request.deadlineMs ?? 0)), fecMode,
    lossPpm: fec.kind === 'planned' ? Math.round(Math.min(1, Math.max(0, fec.lossRate)) * 1e6) : measured.lossPpm,
    burstMilli: fec.kind === 'planned' && fec.meanBurstLength ? Math.round(fec.meanBurstLength * 1000) : measured.burstMilli,
    overheadPermille: fec.kind === 'fixed' ? Math.round(Math.max(0, fec.overhead) * 1000) : 0,
    path: request.path,
  };
}

/**
 * One request on its own stream of `wt`: REQUEST out, RESPONSE and the object (or symbols) in.
 * @param onBytes called whenever bytes arrive on the stream (the session's stall watch)
 */
export async function exchange(
  session: RequestSession,
  wt: WebTransport,
  requestId: number,
  request: ObjectRequest,
  stats: DeliveryStats,
  onBytes: () => void,
): Promise<ObjectResult> {
  const message = requestMessage(requestId, request, session.loss);
  if (request.delivery === 'datagram') session.demux.expect(requestId);
  let stream: WebTransportBidirectionalStream;
  try {
    stream = await wt.createBidirectionalStream();
  } catch (e) {
    session.demux.release(requestId);
    return failure(stats, 0, `could not open a stream: ${e instanceof Error ? e.message : e}`);
  }
  const writer = stream.writable.getWriter();
  const reader = stream.readable.getReader();
  const messages = new MessageReader(reader, onBytes);
  let result: ObjectResult | undefined;
  try {
    result = await converse(session, request, message, stats, writer, messages);
    return result;
  } finally {
    session.demux.release(requestId);
    if (!result?.bytes) {
      // Not delivered (abandoned, cancelled, failed): stop the origin's side of the stream
      // (STOP_SENDING) and ours (RESET_STREAM), or it would go on sending what nobody reads —
      // an abandoned object's bytes competing with its replacement on a struggling link.
      reader.cancel().catch(() => undefined);
      writer.abort().catch(() => undefined);
    }
  }
}

/** The messages of one request on its stream; `exchange` opens and closes the stream. */
async function converse(
  session: RequestSession,
  request: ObjectRequest,
  message: RequestMessage,
  stats: DeliveryStats,
  writer: WritableStreamDefaultWriter<Uint8Array>,
  messages: MessageReader,
): Promise<ObjectResult> {
  const requestedAt = stats.requestedAt;
  const fail = (status: number, error: string) => failure(stats, status, error);
  try {
    await writer.write(encodeMessage(message));
    // A reliable request says everything in its REQUEST: finish our side at once.
    if (request.delivery === 'reliable') await writer.close();
    const first = await messages.next(request.signal);
    if (!first) return fail(0, request.signal?.aborted ? 'cancelled' : 'stream ended before RESPONSE');
    if (first.type !== 'response') return fail(0, `expected RESPONSE, got ${first.type}`);
    stats.firstByteAt = performance.now();
    session.rtt.addResponseTime(stats.firstByteAt - requestedAt);
    if (first.status !== 200 || first.delivery === 'error') {
      return fail(first.status, first.delivery === 'error' ? first.message : `status ${first.status}`);
    }
    // RESPONSE's length is allocated at once (and the FEC decoder sizes itself from the OTI):
    // a wrong or hostile one must not ask for gigabytes.
    const limit = objectByteLimit(request.expectedBytes);
    const refusal = objectSizeRefusal(first.objectLength, limit) ?? (first.delivery === 'datagram' ? datagramResponseRefusal(first, limit) : null);
    // Status 200 with no object, as HTTP/2 reports a refused body: not a lost path, so the
    // player does not ask for it again.
    if (refusal) return fail(200, refusal);
    stats.objectBytes = first.objectLength;
    let reservation;
    try {
      const timeoutMs = request.deadlineMs ? stats.requestedAt + request.deadlineMs - performance.now() : undefined;
      reservation = await (session.budget ?? sharedInFlightBudget).acquire(first.objectLength, { signal: request.signal, timeoutMs });
    } catch (e) {
      return e instanceof InFlightBudgetError ? fail(408, e.message) : fail(0, 'cancelled');
    }
    try {
      return await receiveObject(session, request, message, first, stats, writer, messages, limit);
    } finally {
      reservation.release();
    }
  } catch (e) {
    return fail(0, e instanceof Error ? e.message : String(e));
  }
}

/** The object after its accepted RESPONSE: raw bytes on the stream, or symbols (datagramObject.ts). */
async function receiveObject(
  session: RequestSession,
  request: ObjectRequest,
  message: RequestMessage,
  response: Exclude<ResponseMessage, { delivery: 'error' }>,
  stats: DeliveryStats,
  writer: WritableStreamDefaultWriter<Uint8Array>,
  messages: MessageReader,
  limit: number,
): Promise<ObjectResult> {
  if (response.delivery === 'datagram') {
    return receiveDatagramObject(session, message.requestId, response, request, stats, { messages, writer }, limit);
  }
  const bytes = await messages.readRaw(response.objectLength, request.signal, (n) => {
    if (n > stats.receivedBytes) stats.lastByteAt = performance.now();
    stats.receivedBytes = n;
    request.onProgress?.(n, response.objectLength);
  });
  // The last byte's time: on failure (cancelled, given up, the stream cut) the last that arrived,
  // none if none did — not the failure's, which would count the wait before it as link time
  // (throughput.ts).
  if (bytes) stats.lastByteAt = performance.now();
  if (!bytes) return failure(stats, 0, request.signal?.aborted ? 'cancelled' : 'stream ended before the object did');
  stats.receivedBytes = bytes.length;
  stats.recovered = true;
  return { status: 200, bytes, stats };
}
