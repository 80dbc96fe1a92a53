/**
 * Failover and fallback end to end (docs/player.md → "Failover and fallback"): two real origins
 * serving the same packed demo scene, the first listing the second's WebTransport endpoint in its
 * /config.json (`--wt-endpoint`, pinned by the second's certificate hash), and real headless
 * Chromium playing the app page. The origin the player uses is killed mid-play: playback goes on
 * from the other. Then WebTransport alone is cut (a UDP relay in front of the origin stops, while
 * HTTPS works): the player falls back to HTTP/2 mid-play, and returns to WebTransport when the
 * relay is back. Switches are checked in the QoE log and in the stats; times are bounded.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type QoeLog } from '../src/model/qoe';
import type { PlayerStats } from '../src/player/report';
import { validateQoeLog } from '../src/qoe/schema';
import { type Browser, launch, until } from './lib/browser';
import { demoContentRoot } from './lib/content';
import { type Origin, spkiHash, startOrigin, startRelay } from './lib/processes';

const MANIFEST = '/content/demo/manifest.mpd';

let content: string;
let originA: Origin;
let originB: Origin;
let browser: Browser;

async function stats(): Promise<PlayerStats | null> {
  return browser.page.evaluate(() => window.holoquic?.stats() ?? null);
}

async function qoe(): Promise<QoeLog> {
  const log = await browser.page.evaluate(() => window.holoquic?.qoe() ?? null);
  return validateQoeLog(JSON.parse(JSON.stringify(log)));
}

/** Opens the app page on origin A in headless mode with `params`; resolves once playback has begun. */
async function open(params: Record<string, string>): Promise<void> {
  const query = new URLSearchParams({ origin: originA.httpsBase, manifest: MANIFEST, autoplay: '1', render: '0', ...params });
  await browser.page.goto(`${originA.httpBase}/?${query}`);
  await until(browser, 'playback to begin', async () => ((await stats())?.playedS ?? 0) > 3, 60_000);
}

const wtUrl = (port: number) => `https://127.0.0.1:${port}/holoquic`;

beforeAll(async () => {
  content = demoContentRoot();
  originB = await startOrigin(content);
  const hash = (await (await fetch(`${originB.httpBase}/cert-hash`)).json()) as { value: string };
  originA = await startOrigin(content, ['--wt-endpoint', `${wtUrl(originB.quicPort)} sha-256=${hash.value}`]);
  browser = await launch({ spki: await spkiHash('127.0.0.1', originA.quicPort) });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await originA?.stop();
  await originB?.stop();
});

describe('several origins', () => {
  it('the origin in use is killed mid-play: playback goes on from the other, with at most one freeze', async () => {
    const config = await (await fetch(`${originA.httpBase}/config.json`)).json();
    expect(config.webtransportEndpoints.map((e: { url: string }) => e.url)).toEqual([wtUrl(originA.quicPort), wtUrl(originB.quicPort)]);
    await open({ mode: 'qr', duration: '60' });
    const before = (await stats())!;
    const [victim, survivor] = before.endpoint === wtUrl(originA.quicPort) ? [originA, originB] : [originB, originA];
    expect(before.endpoint).toBe(wtUrl(victim.quicPort));
    const killedAtS = (await qoe()).playback.wallS;
    victim.process.kill('SIGKILL');
    const after = await until(browser, 'the session on the other origin', async () => {
      const s = await stats();
      return s?.endpoint === wtUrl(survivor.quicPort) ? s : null;
    }, 30_000);
    // Playback goes on: five more seconds of content played, from the other origin.
    const playedAtSwitch = after.playedS;
    await until(browser, 'five more seconds played', async () => ((await stats())?.playedS ?? 0) > playedAtSwitch + 5, 30_000);
    const log = await qoe();
    const sw = log.switches?.find((s) => s.from === wtUrl(victim.quicPort) && s.to === wtUrl(survivor.quicPort));
    expect(sw, JSON.stringify(log.switches)).toBeDefined();
    const freezesAfter = log.freezes.filter((f) => f.atS + f.durationS >= killedAtS);
    console.log(`failover: killed ${victim === originA ? 'A' : 'B'} at ${killedAtS.toFixed(2)} s, switched at ${sw!.atS.toFixed(2)} s (${(sw!.atS - killedAtS).toFixed(2)} s later, ${sw!.reason}); ` +
      `freezes after it: ${freezesAfter.map((f) => `${f.durationS.toFixed(2)} s (${f.cause})`).join(', ') || 'none'}`);
    expect(freezesAfter.length, JSON.stringify(log.freezes)).toBeLessThanOrEqual(1);
    const decodedAfter = log.segments.filter((s) => s.requestedAtS > sw!.atS && s.decoded && s.transport === 'webtransport');
    expect(decodedAfter.length, 'segments decoded from the other origin').toBeGreaterThan(0);
    const final = (await stats())!;
    expect(final.switches).toBeGreaterThanOrEqual(1);
    expect(final.lastSwitchReason).toBe(log.switches!.at(-1)!.reason);
    expect(final.transport).toBe('webtransport');
    await browser.page.goto('about:blank');
    // The killed origin comes back for the next test (same ports, so A's list stays right).
    const restarted = await startOrigin(content, victim === originA ? ['--wt-endpoint', (await endpointFlag())] : [], `127.0.0.1:${victim.quicPort}`, `127.0.0.1:${new URL(victim.httpBase).port}`);
    if (victim === originA) originA = restarted;
    else originB = restarted;
  }, 150_000);

  it('WebTransport cut while HTTPS works: HTTP/2 carries playback, and WebTransport takes over again when it returns', async () => {
    // The session goes through a relay in front of origin A's QUIC port; stopping the relay cuts
    // WebTransport alone (the page, the configuration and HTTP/2 reach A directly).
    // Origin A may have been restarted with a new certificate: a browser that trusts it.
    await browser.close();
    browser = await launch({ spki: await spkiHash('127.0.0.1', originA.quicPort) });
    let relay = await startRelay(originA.quicPort, []);
    const relayPort = relay.port;
    try {
      await open({ mode: 'qr', duration: '90', wt: wtUrl(relayPort) });
      expect((await stats())!.transport).toBe('webtransport');
      const cutAtS = (await qoe()).playback.wallS;
      await relay.stop();
      const fallen = await until(browser, 'the fallback to HTTP/2', async () => {
        const s = await stats();
        return s?.transport === 'http2' ? s : null;
      }, 30_000);
      expect(fallen.fallbackReason).toBeTruthy();
      const playedOnFallback = fallen.playedS;
      await until(browser, 'three seconds played over HTTP/2', async () => ((await stats())?.playedS ?? 0) > playedOnFallback + 3, 30_000);
      relay = await startRelay(originA.quicPort, [], `127.0.0.1:${relayPort}`);
      const back = await until(browser, 'the return to WebTransport', async () => {
        const s = await stats();
        return s?.transport === 'webtransport' && s.endpoint ? s : null;
      }, 40_000);
      const playedAtReturn = back.playedS;
      // Records are written once their segment was shown, two seconds (the buffer) after the request.
      await until(browser, 'five seconds played after the return', async () => ((await stats())?.playedS ?? 0) > playedAtReturn + 5, 30_000);
      const log = await qoe();
      const toH2 = log.switches?.find((s) => s.to === 'http2');
      const fromH2 = log.switches?.find((s) => s.from === 'http2');
      expect(toH2, JSON.stringify(log.switches)).toBeDefined();
      expect(fromH2, JSON.stringify(log.switches)).toBeDefined();
      expect(fromH2!.atS).toBeGreaterThan(toH2!.atS);
      const overH2 = log.segments.filter((s) => s.transport === 'http2' && s.decoded && s.requestedAtS > cutAtS);
      expect(overH2.length, 'segments decoded over HTTP/2 during the cut').toBeGreaterThan(0);
      const overWtAgain = log.segments.filter((s) => s.transport === 'webtransport' && s.decoded && s.requestedAtS > fromH2!.atS);
      expect(overWtAgain.length, 'segments decoded over WebTransport after the return').toBeGreaterThan(0);
      const final = (await stats())!;
      expect(final.switches).toBe(log.switches!.length);
      expect(final.state).toBe('playing');
      console.log(`fallback: cut at ${cutAtS.toFixed(2)} s, to HTTP/2 at ${toH2!.atS.toFixed(2)} s (${toH2!.reason}), back at ${fromH2!.atS.toFixed(2)} s; ` +
        `freezes after the cut: ${log.freezes.filter((f) => f.atS + f.durationS >= cutAtS).map((f) => `${f.durationS.toFixed(2)} s (${f.cause})`).join(', ') || 'none'}`);
      await browser.page.goto('about:blank');
    } finally {
      await relay.stop();
    }
  }, 180_000);
});

/** Origin A's `--wt-endpoint` value: origin B, pinned by its current certificate hash. */
async function endpointFlag(): Promise<string> {
  const hash = (await (await fetch(`${originB.httpBase}/cert-hash`)).json()) as { value: string };
  return `${wtUrl(originB.quicPort)} sha-256=${hash.value}`;
}
