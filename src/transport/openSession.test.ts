import { afterEach, describe, expect, it, vi } from 'vitest';
import { openSession } from './openSession';

/** A WebTransport whose handshake completes (or fails) when the test says so. */
class FakeSession {
  static last: FakeSession;
  readonly datagrams = { incomingHighWaterMark: 1 };
  closed = false;
  open!: () => void;
  fail!: (e: Error) => void;
  readonly ready = new Promise<void>((resolve, reject) => {
    this.open = resolve;
    this.fail = reject;
  });
  constructor() {
    FakeSession.last = this;
  }
  close(): void {
    this.closed = true;
  }
}

const endpoint = { url: 'https://o.test:4433/holoquic', certificateHashes: [] };

describe('openSession', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('hands a handshake that completes after the timeout to onLate instead of abandoning it', async () => {
    vi.stubGlobal('WebTransport', FakeSession);
    const late: unknown[] = [];
    await expect(openSession(endpoint, 10, (wt) => late.push(wt))).rejects.toThrow('https://o.test:4433/holoquic: no session after 10 ms');
    const session = FakeSession.last;
    expect(session.closed).toBe(false);
    session.open();
    await Promise.resolve();
    expect(late).toEqual([session]);
  });

  it('closes a timed-out handshake when nobody takes a late session, and never hands on a failed one', async () => {
    vi.stubGlobal('WebTransport', FakeSession);
    await expect(openSession(endpoint, 10)).rejects.toThrow(/no session after 10 ms/);
    expect(FakeSession.last.closed).toBe(true);
    const late: unknown[] = [];
    await expect(openSession(endpoint, 10, (wt) => late.push(wt))).rejects.toThrow(/no session/);
    FakeSession.last.fail(new Error('handshake failed'));
    await new Promise((r) => setTimeout(r, 0));
    expect(late).toEqual([]);
  });

  it('resolves with the session when the handshake completes in time', async () => {
    vi.stubGlobal('WebTransport', FakeSession);
    const opening = openSession(endpoint, 1000, () => {
      throw new Error('not late');
    });
    FakeSession.last.open();
    await expect(opening).resolves.toBe(FakeSession.last);
  });
});
