/**
 * The largest object the client takes for one request, on every transport: the object size a
 * RESPONSE (WebTransport) or a Content-Length (HTTP/2) announces is checked against it before
 * anything is allocated for the object, and the bytes that arrive are checked against it as they
 * come. An origin that is buggy or hostile can then cost the page at most this per request (and
 * `InFlightBudget`, budget.ts, bounds the requests together).
 */

/**
 * The client's hard cap on one object: the origin's default `max_object_bytes` (64 MiB,
 * docs/protocol.md §3.2). No segment the packager writes comes near it.
 */
export const PROTOCOL_MAX_OBJECT_BYTES = 64 * 2 ** 20;

/**
 * How far an object may exceed the size the manifest lets the player expect (the
 * representation's peak bandwidth × the segment duration) before it is refused.
 */
export const EXPECTED_SIZE_FACTOR = 4;

/** The cap never goes below this, so a manifest that understates its bandwidth still plays. */
export const MIN_OBJECT_LIMIT_BYTES = 2 ** 20;

/**
 * The most bytes one request accepts: `EXPECTED_SIZE_FACTOR` × the expected size (at least
 * `MIN_OBJECT_LIMIT_BYTES`), never above `PROTOCOL_MAX_OBJECT_BYTES`; the protocol cap when
 * nothing is expected.
 * @param expectedBytes what the manifest lets the player expect, if it knows (ObjectRequest.expectedBytes)
 */
export function objectByteLimit(expectedBytes?: number): number {
  if (expectedBytes === undefined || !Number.isFinite(expectedBytes) || expectedBytes <= 0) return PROTOCOL_MAX_OBJECT_BYTES;
  const limit = Math.max(MIN_OBJECT_LIMIT_BYTES, Math.ceil(EXPECTED_SIZE_FACTOR * expectedBytes));
  return Math.min(PROTOCOL_MAX_OBJECT_BYTES, limit);
}

/** Why an announced object size is refused, or null when it is accepted. */
export function objectSizeRefusal(bytes: number, limit: number): string | null {
  return bytes > limit ? `object of ${bytes} bytes is over this request's ${limit}-byte limit` : null;
}
