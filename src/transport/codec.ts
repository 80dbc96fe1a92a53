/**
 * The object delivery protocol's messages and datagrams (docs/protocol.md §3), the TypeScript
 * twin of `server/crates/holoquic-proto/src/object.rs`. Pure functions over bytes: no I/O.
 */
import { packetSourceBlock, packetSymbolId } from '../fec/packet';

/** Thrown for bytes that can never form a valid message. */
export class ProtocolError extends Error {
  override name = 'ProtocolError';
}

export const MAX_PATH_LEN = 1024;
export const MAX_REQUEST_LEN = 2048;
export const MAX_MESSAGE_BODY = 4096;
export const REQUEST_ID_LIMIT = 2 ** 32;

const MessageType = {
  request: 0x01,
  repair: 0x02,
  cancel: 0x03,
  response: 0x10,
  sent: 0x11,
  end: 0x12,
  symbol: 0x13,
  path: 0x14,
} as const;

export type FecMode = 'none' | 'planned' | 'fixed';
const FEC_MODES: FecMode[] = ['none', 'planned', 'fixed'];
export type EndReason = 'completed' | 'deadline-passed' | 'cancelled' | 'session-closing';
const END_REASONS: EndReason[] = ['completed', 'deadline-passed', 'cancelled', 'session-closing'];

export interface RequestMessage {
  type: 'request';
  requestId: number;
  delivery: 'reliable' | 'datagram';
  urgency: number;
  deadlineMs: number;
  fecMode: FecMode;
  lossPpm: number;
  burstMilli: number;
  overheadPermille: number;
  path: string;
}

export type ResponseMessage =
  | { type: 'response'; status: 200; delivery: 'reliable'; objectLength: number }
  | {
      type: 'response';
      status: 200;
      delivery: 'datagram';
      objectLength: number;
      /** RFC 6330 object transmission information (12 bytes). */
      oti: Uint8Array;
      sourceSymbols: number;
      plannedRepair: number;
      /**
       * ESI of source block 0's first repair symbol: repair symbol n carries K' + n (RFC 6330's
       * extended source block size), not K + n, so losses are placed by this.
       */
      firstRepairEsi: number;
    }
  | { type: 'response'; status: number; delivery: 'error'; message: string };

export type Message =
  | RequestMessage
  | { type: 'repair'; symbols: number }
  | { type: 'cancel' }
  | ResponseMessage
  | { type: 'sent'; symbolsSent: number; nextEsi: number }
  | { type: 'end'; reason: EndReason; symbolsSent: number; purged: number }
  /**
   * A RaptorQ encoding packet (`sbn u8 | esi u24 | symbol`) on the request stream instead of in a
   * datagram: the origin fills its congestion window's tail with one (docs/protocol.md → SYMBOL).
   */
  | { type: 'symbol'; packet: Uint8Array }
  | PathMessage;

/** The largest round-trip time (µs) a PATH report may carry: larger is a broken origin. */
export const MAX_REPORTED_RTT_US = 60_000_000;

/**
 * PATH: the origin's QUIC connection's view of the network path, on the session's path stream
 * every quarter second (docs/protocol.md → PATH): what Chromium's WebTransport does not tell a page.
 */
export interface PathMessage {
  type: 'path';
  /** Smoothed RTT (µs): propagation plus the bottleneck's queue. */
  smoothedRttUs: number;
  /** Smallest RTT sample of the connection (µs), 0 before the first: propagation alone. */
  minRttUs: number;
  /** RTT variation (µs). */
  rttVarUs: number;
  cwndBytes: number;
  /** The congestion controller's delivery-rate estimate (bytes/s), 0 = unknown. */
  deliveryRateBytesPerS: number;
}

// ── varints (RFC 9000 §16); values are kept below 2^53 so they fit a JS number ──

export function varintLength(value: number): number {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`not a varint: ${value}`);
  return value < 0x40 ? 1 : value < 0x4000 ? 2 : value < 0x4000_0000 ? 4 : 8;
}

export function writeVarint(out: number[], value: number): void {
  const len = varintLength(value);
  const prefix = [0x00, 0x40, 0, 0x80, 0, 0, 0, 0xc0][len - 1];
  for (let i = len - 1; i >= 0; i--) {
    const byte = Math.floor(value / 2 ** (8 * i)) % 256;
    out.push(i === len - 1 ? byte | prefix : byte);
  }
}

/** Incremental reader: throws `Incomplete` when the input ends inside a field. */
export class Incomplete extends Error {
  override name = 'Incomplete';
}

export class ByteReader {
  position = 0;
  constructor(private readonly input: Uint8Array) {}

  get remaining(): number {
    return this.input.length - this.position;
  }

  varint(): number {
    if (this.remaining < 1) throw new Incomplete();
    const first = this.input[this.position];
    const len = 1 << (first >> 6);
    if (this.remaining < len) throw new Incomplete();
    let value = first & 0x3f;
    for (let i = 1; i < len; i++) value = value * 256 + this.input[this.position + i];
    if (!Number.isSafeInteger(value)) throw new ProtocolError('varint beyond 2^53');
    this.position += len;
    return value;
  }

  u8(): number {
    return this.bytes(1)[0];
  }

  bytes(n: number): Uint8Array {
    if (this.remaining < n) throw new Incomplete();
    const out = this.input.subarray(this.position, this.position + n);
    this.position += n;
    return out;
  }
}

// ── messages ──

const utf8 = new TextEncoder();
const utf8Strict = new TextDecoder('utf-8', { fatal: true });
const utf8Lossy = new TextDecoder('utf-8');

export function encodeMessage(message: Message): Uint8Array {
  const body: number[] = [];
  let type: number;
  switch (message.type) {
    case 'request': {
      const path = utf8.encode(message.path);
      if (path.length > MAX_PATH_LEN) throw new ProtocolError('path longer than 1024 bytes');
      if (message.requestId >= REQUEST_ID_LIMIT) throw new ProtocolError('request id ≥ 2^32');
      writeVarint(body, message.requestId);
      body.push(message.delivery === 'datagram' ? 1 : 0, message.urgency);
      writeVarint(body, message.deadlineMs);
      body.push(FEC_MODES.indexOf(message.fecMode));
      writeVarint(body, message.lossPpm);
      writeVarint(body, message.burstMilli);
      writeVarint(body, message.overheadPermille);
      writeVarint(body, path.length);
      body.push(...path);
      type = MessageType.request;
      break;
    }
    case 'repair':
      writeVarint(body, message.symbols);
      type = MessageType.repair;
      break;
    case 'cancel':
      type = MessageType.cancel;
      break;
    case 'response':
      writeVarint(body, message.status);
      if (message.delivery === 'error') {
        writeVarint(body, 0);
        body.push(...utf8.encode(message.message));
      } else {
        writeVarint(body, message.objectLength);
        if (message.delivery === 'datagram') {
          body.push(...message.oti);
          writeVarint(body, message.sourceSymbols);
          writeVarint(body, message.plannedRepair);
          writeVarint(body, message.firstRepairEsi);
        }
      }
      type = MessageType.response;
      break;
    case 'sent':
      writeVarint(body, message.symbolsSent);
      writeVarint(body, message.nextEsi);
      type = MessageType.sent;
      break;
    case 'end':
      body.push(END_REASONS.indexOf(message.reason));
      writeVarint(body, message.symbolsSent);
      writeVarint(body, message.purged);
      type = MessageType.end;
      break;
    case 'symbol':
      body.push(...message.packet);
      type = MessageType.symbol;
      break;
    case 'path':
      for (const value of [message.smoothedRttUs, message.minRttUs, message.rttVarUs, message.cwndBytes, message.deliveryRateBytesPerS]) writeVarint(body, value);
      type = MessageType.path;
      break;
  }
  const out: number[] = [];
  writeVarint(out, type);
  writeVarint(out, body.length);
  out.push(...body);
  return Uint8Array.from(out);
}

/**
 * Decodes one framed message at the start of `input`. Returns null when more bytes are needed;
 * throws ProtocolError for bytes that can never be valid.
 */
export function decodeMessage(input: Uint8Array): { message: Message; consumed: number } | null {
  const r = new ByteReader(input);
  let type: number;
  let body: Uint8Array;
  try {
    type = r.varint();
    const len = r.varint();
    const limit = type === MessageType.request ? MAX_REQUEST_LEN : MAX_MESSAGE_BODY;
    if (len > limit) throw new ProtocolError('message body too long');
    body = r.bytes(len);
  } catch (e) {
    if (e instanceof Incomplete) return null;
    throw e;
  }
  try {
    return { message: decodeBody(type, new ByteReader(body), body.length), consumed: r.position };
  } catch (e) {
    // The frame is complete: running out of body bytes means the body is malformed.
    if (e instanceof Incomplete) throw new ProtocolError('message body shorter than its fields');
    throw e;
  }
}

function decodeBody(type: number, r: ByteReader, length: number): Message {
  let message: Message;
  switch (type) {
    case MessageType.request: {
      const requestId = r.varint();
      if (requestId >= REQUEST_ID_LIMIT) throw new ProtocolError('request id ≥ 2^32');
      const deliveryByte = r.u8();
      if (deliveryByte > 1) throw new ProtocolError('unknown delivery');
      const urgency = r.u8();
      if (urgency > 7) throw new ProtocolError('urgency above 7');
      const deadlineMs = r.varint();
      const fecMode = FEC_MODES[r.u8()];
      if (!fecMode) throw new ProtocolError('unknown fec mode');
      const lossPpm = r.varint();
      if (lossPpm > 1_000_000) throw new ProtocolError('loss above 1 000 000 ppm');
      const burstMilli = r.varint();
      const overheadPermille = r.varint();
      const pathLength = r.varint();
      if (pathLength > MAX_PATH_LEN) throw new ProtocolError('path longer than 1024 bytes');
      let path: string;
      try {
        path = utf8Strict.decode(r.bytes(pathLength));
      } catch (e) {
        if (e instanceof Incomplete) throw e;
        throw new ProtocolError('path is not UTF-8');
      }
      message = {
        type: 'request',
        requestId,
        delivery: deliveryByte === 1 ? 'datagram' : 'reliable',
        urgency,
        deadlineMs,
        fecMode,
        lossPpm,
        burstMilli,
        overheadPermille,
        path,
      };
      break;
    }
    case MessageType.repair: {
      const symbols = r.varint();
      if (symbols < 1 || symbols > 65_535) throw new ProtocolError('repair symbol count outside 1..65535');
      message = { type: 'repair', symbols };
      break;
    }
    case MessageType.cancel:
      message = { type: 'cancel' };
      break;
    case MessageType.response:
      return decodeResponse(r, length);
    case MessageType.sent:
      message = { type: 'sent', symbolsSent: r.varint(), nextEsi: r.varint() };
      break;
    case MessageType.end: {
      const reason = END_REASONS[r.u8()];
      if (!reason) throw new ProtocolError('unknown END reason');
      message = { type: 'end', reason, symbolsSent: r.varint(), purged: r.varint() };
      break;
    }
    case MessageType.symbol:
      if (length < 5) throw new ProtocolError('SYMBOL shorter than payload id + 1 byte');
      return { type: 'symbol', packet: r.bytes(length).slice() };
    case MessageType.path: {
      const rtt = () => {
        const us = r.varint();
        if (us > MAX_REPORTED_RTT_US) throw new ProtocolError('PATH round-trip time over 60 s');
        return us;
      };
      const smoothedRttUs = rtt(), minRttUs = rtt(), rttVarUs = rtt();
      message = { type: 'path', smoothedRttUs, minRttUs, rttVarUs, cwndBytes: r.varint(), deliveryRateBytesPerS: r.varint() };
      break;
    }
    default:
      throw new ProtocolError(`unknown message type 0x${type.toString(16)}`);
  }
  if (r.remaining !== 0) throw new ProtocolError('trailing bytes in message body');
  return message;
}

function decodeResponse(r: ByteReader, length: number): ResponseMessage {
  const status = r.varint();
  const objectLength = r.varint();
  if (status !== 200) {
    return { type: 'response', status, delivery: 'error', message: utf8Lossy.decode(r.bytes(r.remaining)) };
  }
  // A reliable 200 has no further fields: the body length tells the two forms apart.
  if (r.position === length) return { type: 'response', status: 200, delivery: 'reliable', objectLength };
  const oti = r.bytes(12).slice();
  const sourceSymbols = r.varint();
  const plannedRepair = r.varint();
  const firstRepairEsi = r.varint();
  if (r.remaining !== 0) throw new ProtocolError('trailing bytes in RESPONSE');
  return { type: 'response', status: 200, delivery: 'datagram', objectLength, oti, sourceSymbols, plannedRepair, firstRepairEsi };
}

// ── object datagrams (§3.1) ──

export interface ObjectDatagram {
  requestId: number;
  /** Serialized RaptorQ EncodingPacket (sbn u8 | esi u24 | symbol), for the decoder unchanged. */
  packet: Uint8Array;
  sourceBlock: number;
  symbolId: number;
}

/** Decodes a WebTransport datagram payload (the browser has already removed the session prefix). */
export function decodeObjectDatagram(payload: Uint8Array): ObjectDatagram {
  const r = new ByteReader(payload);
  let requestId: number;
  try {
    requestId = r.varint();
  } catch {
    throw new ProtocolError('datagram without request id');
  }
  const packet = payload.subarray(r.position);
  if (packet.length < 5) throw new ProtocolError('datagram shorter than payload id + 1 byte');
  return { requestId, packet, sourceBlock: packetSourceBlock(packet), symbolId: packetSymbolId(packet) };
}

