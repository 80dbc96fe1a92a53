/**
 * Opening WebTransport sessions: one to an endpoint, with its pinned certificate hashes and a
 * time limit, and one to each of several endpoints at once where the first to open wins (the
 * lowest handshake time). The session's lifecycle after that is webtransport.ts's.
 */
import type { WebTransportEndpoint } from './originConfig';

/**
 * Datagrams the browser may hold for us while the page is busy. Chromium's default is 1: a
 * datagram that arrives while no read() is pending replaces the one waiting, so a main thread busy
 * for a few milliseconds would lose symbols the network delivered, and the loss estimate would
 * charge them to the network. 8192 symbols (≈ 11 MB) cover about a second at 80 Mbit/s.
 */
const INCOMING_DATAGRAM_QUEUE = 8192;

export function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * Opens a session to `endpoint`, or rejects within `timeoutMs` with a reason naming its URL. With
 * `onLate`, a handshake still under way at the timeout is not abandoned: if it completes later
 * (the browser gives up on its own), the session is handed to `onLate`, which uses or closes it.
 * At a 100-ms round trip a loss burst on the handshake's few packets can hold it for longer than
 * the timeout (2 of 9 starts at 5 %: docs/results.md, pass of 2026-11-28, "A 1-s buffer"): the player
 * plays over HTTP/2 meanwhile, and the session the handshake opens need not wait for a probe.
 */
export async function openSession(endpoint: WebTransportEndpoint, timeoutMs: number, onLate?: (wt: WebTransport) => void): Promise<WebTransport> {
  const { url, certificateHashes: hashes } = endpoint;
  const wt = new WebTransport(url, hashes.length > 0 ? { serverCertificateHashes: hashes } : {});
  wt.datagrams.incomingHighWaterMark = INCOMING_DATAGRAM_QUEUE;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let timedOut = false;
  try {
    await Promise.race([
      wt.ready,
      new Promise((_, reject) => (timer = setTimeout(() => {
        timedOut = true;
        reject(new Error(`no session after ${timeoutMs} ms`));
      }, timeoutMs))),
    ]);
    return wt;
  } catch (e) {
    if (timedOut && onLate) {
      wt.ready.then(() => onLate(wt), () => undefined);
    } else {
      wt.close();
      wt.ready.catch(() => undefined);
    }
    throw new Error(`${url}: ${message(e)}`);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Opens a session with `open` to each of `indices` at once and resolves with the first that
 * opens and its index; the others are closed as they open. Rejects with every distinct reason
 * when none opens.
 */
export async function openFirst(indices: number[], open: (i: number) => Promise<WebTransport>): Promise<{ wt: WebTransport; i: number }> {
  const attempts = indices.map((i) => open(i).then((wt) => ({ wt, i })));
  let winner: { wt: WebTransport; i: number };
  try {
    winner = await Promise.any(attempts);
  } catch (e) {
    const reasons = e instanceof AggregateError ? e.errors.map(message) : [message(e)];
    throw new Error([...new Set(reasons)].join('; '));
  }
  for (const a of attempts) void a.then(({ wt }) => wt !== winner.wt && wt.close({ closeCode: 0, reason: 'another endpoint answered first' }), () => undefined);
  return winner;
}
