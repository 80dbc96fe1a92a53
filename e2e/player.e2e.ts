/**
 * The player end to end, per delivery mode: the real origin serving the real packed demo scene,
 * real headless Chromium running the app page in its headless mode (`render=0`: request → FEC →
 * wasm/WebCodecs decode, no drawing), and the page's automation contract (docs/qoe.md). Each run
 * plays 10 s and its holoquic-qoe/1 log is checked for what the mode promises. Then the faults:
 * bursty loss on the datagram path, the link cut for a few seconds, the origin restarting.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlayerMode } from '../src/model/modes';
import { validateQoeLog } from '../src/qoe/schema';
import { type QoeLog, type QoeSegment } from '../src/model/qoe';
import { type Browser, launch } from './lib/browser';
import { demoContentRoot } from './lib/content';
import { type Origin, spkiHash, startOrigin, startRelay } from './lib/processes';

const MANIFEST = '/content/demo/manifest.mpd';
const PLAY_S = 10;

let content: string;
let origin: Origin;
let browser: Browser;

interface Played {
  state: string;
  error: string | null;
  qoe: QoeLog;
}

/** Opens the app page in headless mode with `params`, waits for the run to end, returns its log. */
async function play(params: Record<string, string>, timeoutS = PLAY_S + 60): Promise<Played> {
  const query = new URLSearchParams({
    // The page reads /config.json (WebTransport URL, certificate hashes) and the manifest here.
    origin: origin.httpsBase, manifest: MANIFEST, autoplay: '1', render: '0', duration: String(PLAY_S), ...params,
  });
  const page = browser.page;
  await page.goto(`${origin.httpBase}/?${query}`);
  const deadline = Date.now() + timeoutS * 1000;
  let state = 'loading';
  while (Date.now() < deadline) {
    state = await page.evaluate(() => window.holoquic?.state() ?? 'loading');
    if (state === 'ended' || state === 'failed') break;
    await new Promise((r) => setTimeout(r, 250));
  }
  const error = await page.evaluate(() => window.holoquic?.error() ?? null);
  const qoe = await page.evaluate(() => window.holoquic?.qoe() ?? null);
  expect(state, `player did not end: ${error}\n${browser.log.slice(-10).join('\n')}`).toBe('ended');
  return { state, error, qoe: validateQoeLog(JSON.parse(JSON.stringify(qoe))) };
}

/** Records that are outcomes (an abandoned request was replaced by another record). */
function outcomes(log: QoeLog): QoeSegment[] {
  return log.segments.filter((s) => !s.abandoned);
}

function describeRecord(s: QoeSegment): string {
  return `seg ${s.index} ${s.object} q${s.quality} ${s.delivery}/${s.fec} rank ${s.rank} recovered=${s.recovered} decoded=${s.decoded}${s.decodeError ? ` (${s.decodeError})` : ''}`;
}

/** Checks every mode shares: it played past startup, and everything that arrived in time was decoded. */
function expectPlayedAndDecoded(log: QoeLog): void {
  const records = outcomes(log);
  const story = `freezes ${JSON.stringify(log.freezes)}; startup ${log.playback.startupS} s; ` +
    records.map((s) => `${describeRecord(s)} req ${s.requestedAtS.toFixed(2)} done ${s.completedAtS?.toFixed(2)} decode ${s.decodeMs?.toFixed(0)} ms`).join('\n');
  // Past startup and on (how far depends on the machine's decoding speed: not asserted here).
  expect(Math.max(...records.map((s) => s.index)), story).toBeGreaterThanOrEqual(2);
  // An object whose segment was shown before a decoder was free for it is late, not undecodable.
  const undecoded = records.filter((s) => s.recovered && !s.decoded && !s.decodeLate);
  expect(undecoded.map(describeRecord), story).toEqual([]);
  expect(records.filter((s) => s.decoded).length).toBeGreaterThan(0);
}

/** A failure's account of a run with an outage: its freezes, every change of path, each request, the page's last words. */
function pathStory(log: QoeLog): string {
  const requests = log.segments.map((s) => `${describeRecord(s)} ${s.transport}${s.abandoned ? ' abandoned' : ''} req ${s.requestedAtS.toFixed(2)} ` +
    `first byte ${s.firstByteAtS?.toFixed(2)} done ${s.completedAtS?.toFixed(2)} decode ${s.decodeMs?.toFixed(0)} ms${s.onTime ? ' on time' : s.shownLate ? ' shown late' : ''}`);
  const page = browser.log.filter((line) => !line.includes('ERR_CONNECTION_REFUSED')).slice(-10);
  return [`freezes ${JSON.stringify(log.freezes)}`, `switches ${JSON.stringify(log.switches)}`, ...requests, ...page].join('\n');
}

beforeAll(async () => {
  content = demoContentRoot();
  origin = await startOrigin(content);
  browser = await launch({ spki: await spkiHash('127.0.0.1', origin.quicPort) });
});

afterAll(async () => {
  await browser?.close();
  await origin?.stop();
});

describe('each delivery mode does what it says', () => {
  const reliableCount = 2; // default k = half of the 4 demo objects

  const checks: Record<PlayerMode, (records: QoeSegment[]) => void> = {
    h2: (records) => {
      expect(records.every((s) => s.transport === 'http2' && s.delivery === 'reliable')).toBe(true);
      // No path stream over HTTP/2: the round trip is the responses'.
      expect(records.every((s) => s.rttSource === 'responses')).toBe(true);
    },
    qr: (records) => {
      expect(records.every((s) => s.transport === 'webtransport' && s.delivery === 'reliable')).toBe(true);
      // Past the first second the origin's PATH reports (its path stream, read by Chromium) give the round trip.
      const later = records.filter((s) => s.index >= 2);
      expect(later.length).toBeGreaterThan(0);
      expect(later.filter((s) => s.rttSource !== 'origin' || !(s.rttS! > 0 && s.rttS! < 1) || !(s.cwndBytes! > 0)).map(describeRecord)).toEqual([]);
    },
    qpr: (records) => {
      // Exactly the top-k objects of each segment's ranking travel reliably; the rest as plain datagrams.
      const wrong = records.filter((s) => (s.rank < reliableCount) !== (s.delivery === 'reliable') || (s.delivery === 'datagram' && s.fec !== 'none'));
      expect(wrong.map(describeRecord)).toEqual([]);
      expect(records.some((s) => s.delivery === 'datagram')).toBe(true);
    },
    'qpr-fec': (records) => {
      // Its datagram objects carry the repair the player planned (QPR_FEC_TARGET), asked for as fixed FEC.
      const wrong = records.filter((s) => (s.rank < reliableCount) !== (s.delivery === 'reliable') || (s.delivery === 'datagram' && s.fec !== 'fixed'));
      expect(wrong.map(describeRecord)).toEqual([]);
      expect(records.some((s) => s.delivery === 'datagram')).toBe(true);
    },
    'q100-fec': (records) => {
      expect(records.filter((s) => s.delivery !== 'datagram' || s.fec !== 'planned').map(describeRecord)).toEqual([]);
    },
    adaptive: (records) => {
      expect(records.every((s) => s.transport === 'webtransport')).toBe(true);
      // docs/player.md → "How `adaptive` decides": on loopback a retransmission always fits and the
      // link carries every lowest rung, so once the link is measured (the first segments are
      // planned before that) objects in view travel reliably without repair, the rest as datagrams
      // with no repair up front (repair on demand can follow) — at their lowest rung or, with the
      // capacity the objects in view leave, higher. "Measured" is the record's own word for it
      // (`plannedThroughputBps`), not a segment number: on a loaded machine playback begins late
      // and segments up to the buffer's depth are planned before the first sample (CI, 2026-11-30:
      // segment 3 planned so, its objects out of view as datagrams with repair planned up front).
      const planned = records.filter((s) => s.index >= 1 && s.plannedThroughputBps !== undefined);
      expect(planned.length).toBeGreaterThan(0);
      const wrong = planned.filter((s) => (s.visibleArea > 0
        ? s.delivery !== 'reliable' || s.fec !== 'none'
        : s.delivery !== 'datagram' || s.fec !== 'none'));
      expect(wrong.map(describeRecord)).toEqual([]);
    },
  };

  for (const mode of Object.keys(checks) as PlayerMode[]) {
    it(`${mode}: plays ${PLAY_S} s with the mode's delivery and decodes what arrives`, async () => {
      const { qoe } = await play({ mode });
      expect(qoe.config.mode).toBe(mode);
      expect(qoe.config.transport).toBe(mode === 'h2' ? 'http2' : 'webtransport');
      expectPlayedAndDecoded(qoe);
      checks[mode](outcomes(qoe));
    });
  }
});

describe('late upgrades (docs/player.md → "Late upgrades")', () => {
  it('qr: every object\'s lowest rung early, higher rungs of the objects in view late, shown in its place, never waited for', async () => {
    const { qoe } = await play({ mode: 'qr', 'late-upgrade': '1' });
    expect(qoe.config.lateUpgrades).toBe(true);
    expectPlayedAndDecoded(qoe);
    const story = qoe.segments.map((s) => `${describeRecord(s)}${s.upgrade ? ' upgrade' : ''}${s.superseded ? ' superseded' : ''} onTime=${s.onTime}`).join('\n');
    // The early requests ask for the lowest rung only; every higher rung is an upgrade.
    expect(qoe.segments.filter((s) => !s.upgrade && s.quality > 0).map(describeRecord), story).toEqual([]);
    const shown = qoe.segments.filter((s) => s.upgrade && s.onTime);
    expect(shown.length, story).toBeGreaterThan(0);
    expect(shown.every((s) => s.quality > 0 && s.visibleArea > 0 && s.delivery === 'reliable'), story).toBe(true);
    // A lowest rung an upgrade replaced is marked, and playback never froze for an upgrade.
    for (const s of shown) expect(qoe.segments.some((b) => !b.upgrade && b.superseded && b.object === s.object && b.index === s.index), story).toBe(true);
    expect(qoe.segments.filter((s) => s.upgrade && s.shownLate).map(describeRecord)).toEqual([]);
    // Seen quality (area at the pose at playout) is recorded for what was shown.
    expect(qoe.segments.filter((s) => s.onTime).every((s) => s.seenArea !== undefined)).toBe(true);
  });
});

describe('QoE export', () => {
  it("the app's QoE button downloads the run's holoquic-qoe/1 log", async () => {
    const { qoe } = await play({ mode: 'qr', duration: '4' });
    const [download] = await Promise.all([browser.page.waitForEvent('download'), browser.page.click('#qoe-export')]);
    const log = validateQoeLog(JSON.parse(readFileSync(await download.path(), 'utf8')));
    expect(log.startedAt).toBe(qoe.startedAt);
    expect(log.segments.length).toBe(qoe.segments.length);
  });
});

describe('faults', () => {
  it('q100-fec: objects whose datagrams were lost in bursts are recovered by FEC and decoded', async () => {
    // ~5 % Gilbert–Elliott loss (docs/qoe.md) on every QUIC packet between browser and origin.
    const relay = await startRelay(origin.quicPort, ['--ge', '0.7538,10,70,0.1', '--seed', '11']);
    try {
      const { qoe } = await play({ mode: 'q100-fec', wt: `https://127.0.0.1:${relay.port}/holoquic` });
      expect(qoe.config.transport).toBe('webtransport');
      const lossy = outcomes(qoe).filter((s) => s.symbolsSent !== undefined && s.symbolsReceived !== undefined && s.symbolsReceived < s.symbolsSent);
      expect(lossy.length, 'the relay should have dropped some symbols').toBeGreaterThan(0);
      expect(lossy.filter((s) => s.recovered && s.decoded).length).toBeGreaterThan(0);
      expectPlayedAndDecoded(qoe);
    } finally {
      await relay.stop();
    }
  });

  it('qr: a cut link stalls playback; the freeze is counted, the stalled session is replaced, and playback resumes', async () => {
    const relay = await startRelay(origin.quicPort, []);
    try {
      const run = play({ mode: 'qr', wt: `https://127.0.0.1:${relay.port}/holoquic`, duration: '25' }, 90);
      // Cut: the relay stops forwarding for 6 s (its process is stopped), then continues — 4 s
      // longer than the player's 2-s buffer can bridge.
      await new Promise((r) => setTimeout(r, 6000));
      relay.process.kill('SIGSTOP');
      await new Promise((r) => setTimeout(r, 6000));
      relay.process.kill('SIGCONT');
      const { qoe } = await run;
      expect(qoe.freezes.length).toBeGreaterThanOrEqual(1);
      expect(qoe.freezes.reduce((a, f) => a + f.durationS, 0)).toBeGreaterThan(1);
      const lastFreeze = qoe.freezes[qoe.freezes.length - 1];
      const after = outcomes(qoe).filter((s) => s.requestedAtS > lastFreeze.atS + lastFreeze.durationS && s.decoded);
      expect(after.length, 'segments decoded after the freeze').toBeGreaterThan(0);
      // Requests waited 6 s without a byte, more than the 2-s stall timeout: the player gave up
      // on that session and played on over a new one.
      expect(qoe.config.stallTimeoutS).toBe(2);
      expect(qoe.playback.sessionsReplaced).toBeGreaterThanOrEqual(1);
    } finally {
      await relay.stop();
    }
  });

  it('qr: the origin restarting mid-play is an outage freeze, then the player reconnects and plays on', async () => {
    // A restarted origin has a new self-signed certificate: the page learns its hash again from
    // /config.json, read over the plain-HTTP listener, which restarts on the same port.
    const [port, httpPort] = [origin.quicPort, new URL(origin.httpBase).port];
    // The run must outlast the restart by more than the player needs to show a segment asked for
    // after it. The restart comes up to ~14 s into the run: 5 s of play (plus the page's startup),
    // the stop (the origin drains, until stop() kills it after 5 s; 3.3–5.5 s measured on a loaded
    // 2-core machine), 4 s down, the start. Then the player waits for the path back (HTTP asked
    // again every 0.6 s: first bytes 0.4–3.5 s after the start), plays the backlog of segments
    // asked for before the restart, and asks for new ones only as the freeze ends (2–5 s after
    // the restart), a 2-s buffer ahead of their playout. A 20-s run left 6–10 s for all that and
    // failed 3 runs in 11 under load, every time with the player recovered (docs/player.md →
    // "Failover and fallback", One origin restarting).
    const run = play({ mode: 'qr', duration: '30', origin: origin.httpBase }, 100);
    await new Promise((r) => setTimeout(r, 5000));
    const stopping = Date.now();
    await origin.stop();
    const stopMs = Date.now() - stopping;
    // Down for longer than the 2-s buffer, so playback must stall (a shorter outage is hidden by it).
    await new Promise((r) => setTimeout(r, 4000));
    const restartedAt = Date.now();
    origin = await startOrigin(content, [], `127.0.0.1:${port}`, `127.0.0.1:${httpPort}`);
    const startMs = Date.now() - restartedAt;
    const { qoe } = await run;
    const wallAtRestart = qoe.playback.wallS - (Date.now() - restartedAt) / 1000;
    const story = `stop took ${stopMs} ms, start ${startMs} ms; restart at ~${wallAtRestart.toFixed(2)} s of ${qoe.playback.wallS.toFixed(2)} s\n${pathStory(qoe)}`;
    expect(qoe.freezes.some((f) => f.cause === 'outage'), story).toBe(true);
    const after = outcomes(qoe).filter((s) => s.requestedAtS > wallAtRestart && s.decoded);
    expect(after.length, `segments decoded after the restart\n${story}`).toBeGreaterThan(0);
  });
});
