/**
 * The client side of the fairness benchmark (scripts/bench/fairness.sh sets up the network and
 * the origin, then runs this in the client's namespace; docs/benchmarks.md → "Sharing a
 * bottleneck with CUBIC TCP").
 *
 *   tsx scripts/bench/fairness.ts run --ns-a NS --ns-b NS --origin HOST:PORT --page URL --via datagram|reliable
 *       --rate-mbit R --alone-s A --both-s B --qlog-dir DIR --label NAME --out FILE
 *       Headless Chromium fetches 5 MB objects back to back over QUIC (two requests in flight, so
 *       the flow never idles between objects) for A seconds, then receives a TCP bulk transfer
 *       (--tcp HOST:PORT, a CUBIC sender beside the origin) for B seconds as well. Every 250 ms: the client namespace's UDP and TCP byte counters
 *       (iptables, where packets arrive) and the bottleneck queue's backlog (tc, origin side).
 *       Writes one JSON result: each flow's share over the shared phase, the QUIC flow's rate
 *       alone and shared, the queue delay, and the origin's smoothed RTT and congestion window
 *       (its qlog) per phase.
 *   tsx scripts/bench/fairness.ts summary FILE...
 *       A Markdown table per label and path: medians (min–max) over the runs.
 */
import { spawnSync } from 'node:child_process';
import { createHash, X509Certificate } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect as connectTcp, type Socket } from 'node:net';
import { connect } from 'node:tls';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { launch } from '../../e2e/lib/browser';
import { readQlogEvents } from '../qoe/lib/qlog';

interface Sample { t: number; udpBytes: number; tcpBytes: number; backlogBytes: number }

export interface FairnessResult {
  label: string;
  via: string;
  rateMbit: number;
  /** QUIC's part of the bytes both flows received during the shared phase. */
  quicShare: number;
  quicAloneMbit: number;
  quicSharedMbit: number;
  tcpSharedMbit: number;
  /** Median bottleneck queueing delay (backlog / rate), ms. */
  queueDelayAloneMs: number;
  queueDelaySharedMs: number;
  /** The origin's view (qlog `recovery:metrics_updated`), medians per phase. */
  srttAloneMs: number | null;
  srttSharedMs: number | null;
  cwndAloneKb: number | null;
  cwndSharedKb: number | null;
  fetches: number;
  errors: string[];
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Bytes counted by the client namespace's two mangle rules (fairness.sh). The rules have no
 *  target, so the listing's third column is the protocol (by number). */
function counters(): { udp: number; tcp: number } {
  const out = spawnSync('iptables-legacy', ['-t', 'mangle', '-nvxL', 'PREROUTING'], { encoding: 'utf8' }).stdout;
  const rows = out.split('\n').map((l) => l.trim().split(/\s+/));
  const bytes = (protocolNumber: string) => Number(rows.find((f) => f[2] === protocolNumber)?.[1] ?? NaN);
  return { udp: bytes('17'), tcp: bytes('6') };
}

function backlog(nsA: string): number {
  const out = spawnSync('ip', ['netns', 'exec', nsA, 'tc', '-s', 'qdisc', 'show', 'dev', 'hqveth-a'], { encoding: 'utf8' }).stdout;
  const m = out.match(/backlog (\d+)([KM]?)b/);
  return m ? Number(m[1]) * (m[2] === 'K' ? 1000 : m[2] === 'M' ? 1e6 : 1) : NaN;
}

function spkiHash(hostPort: string): Promise<string> {
  const [host, port] = hostPort.split(':');
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port: Number(port), rejectUnauthorized: false, ALPNProtocols: ['h2'] }, () => {
      const cert = socket.getPeerX509Certificate() as X509Certificate;
      socket.end();
      resolve(createHash('sha256').update(cert.publicKey.export({ type: 'spki', format: 'der' })).digest('base64'));
    });
    socket.on('error', reject);
  });
}

/** (wall-clock ms, smoothed RTT ms, congestion window bytes) from every qlog in `dir`. */
function qlogMetrics(dir: string): { t: number; srtt?: number; cwnd?: number }[] {
  const value = (v: unknown) => (typeof v === 'number' ? v : undefined);
  return readdirSync(dir).filter((f) => f.endsWith('.sqlog'))
    .flatMap((file) => readQlogEvents(readFileSync(join(dir, file), 'utf8')))
    .filter((e) => e.name === 'quic:recovery_metrics_updated')
    .map((e) => ({ t: e.wallMs, srtt: value(e.data.smoothed_rtt), cwnd: value(e.data.congestion_window) }));
}

async function run(): Promise<void> {
  const { values: a } = parseArgs({
    args: process.argv.slice(3),
    options: {
      'ns-a': { type: 'string' }, 'ns-b': { type: 'string' }, origin: { type: 'string' }, page: { type: 'string' }, via: { type: 'string' },
      'rate-mbit': { type: 'string' }, 'alone-s': { type: 'string' }, 'both-s': { type: 'string' }, 'qlog-dir': { type: 'string' },
      label: { type: 'string' }, out: { type: 'string' }, tcp: { type: 'string' },
    },
  });
  const via = a.via as 'datagram' | 'reliable';
  const rateMbit = Number(a['rate-mbit']);
  const [aloneMs, bothMs] = [Number(a['alone-s']) * 1000, Number(a['both-s']) * 1000];
  const browser = await launch({ spki: await spkiHash(a.origin!) });
  const errors: string[] = [];
  const samples: Sample[] = [];
  let fetches = 0;
  let stopQuic = false;
  try {
    const query = new URLSearchParams({ origin: `https://${a.origin}`, https: `https://${a.origin}` });
    await browser.page.goto(`${a.page}/e2e/pages/transport.html?${query}`);
    const connected = await browser.page.evaluate(() => window.holoquicTransportTest.connect());
    if (!connected.webtransport) throw new Error(`no WebTransport session: ${JSON.stringify(connected)}`);
    // Planned FEC as the player plans it for 5 % bursty loss (docs/qoe.md), so the flow carries
    // its repair overhead; there is no random loss on this path.
    const fec = via === 'datagram' ? { kind: 'planned', lossRate: 0.05, meanBurstLength: 2.62 } : undefined;
    const quicLoop = async () => {
      while (!stopQuic) {
        const r = await browser.page.evaluate(([o]) => window.holoquicTransportTest.fetch('/content/bench/object.bin', o as never), [{ via, fec }] as const);
        if (r.error) errors.push(r.error);
        else fetches++;
      }
    };
    const loops = [quicLoop(), quicLoop()];
    const t0 = Date.now();
    const sampler = setInterval(() => {
      const c = counters();
      samples.push({ t: Date.now() - t0, udpBytes: c.udp, tcpBytes: c.tcp, backlogBytes: backlog(a['ns-a']!) });
    }, 250);
    await sleep(aloneMs);
    const [tcpHost, tcpPort] = a.tcp!.split(':');
    const tcp: Socket = connectTcp({ host: tcpHost, port: Number(tcpPort) });
    tcp.on('data', () => {}); // read and drop: the counters measure
    tcp.on('error', (e) => errors.push(`tcp: ${e.message}`));
    await sleep(bothMs / 2);
    // Which congestion control the TCP sender runs, from the kernel's socket info.
    const ss = spawnSync('ip', ['netns', 'exec', a['ns-a']!, 'ss', '-tin', `sport = :${tcpPort}`], { encoding: 'utf8' }).stdout;
    if (!/\bcubic\b/.test(ss)) errors.push(`the TCP sender does not run cubic: ${ss.replace(/\s+/g, ' ')}`);
    await sleep(bothMs / 2);
    clearInterval(sampler);
    tcp.destroy();
    stopQuic = true;
    await Promise.race([Promise.all(loops), sleep(15_000)]);

    const at = (t: number) => samples.reduce((best, s) => (Math.abs(s.t - t) < Math.abs(best.t - t) ? s : best));
    const mbit = (bytes: number, ms: number) => (bytes * 8) / (ms * 1000);
    // The first second of each phase is left out (the QUIC handshake, TCP's connection).
    const [aloneStart, aloneEnd, sharedStart, sharedEnd] = [at(1000), at(aloneMs), at(aloneMs + 1000), samples[samples.length - 1]];
    const udpShared = sharedEnd.udpBytes - sharedStart.udpBytes;
    const tcpShared = sharedEnd.tcpBytes - sharedStart.tcpBytes;
    const delayMs = (s: Sample) => (s.backlogBytes * 8) / (rateMbit * 1000);
    const phase = (from: number, to: number) => samples.filter((s) => s.t >= from && s.t < to);
    const metrics = qlogMetrics(a['qlog-dir']!);
    const wall = (t: number) => t0 + t;
    const qlogPhase = (from: number, to: number, key: 'srtt' | 'cwnd') => {
      const xs = metrics.filter((m) => m.t >= wall(from) && m.t < wall(to) && m[key] !== undefined).map((m) => m[key]!);
      return xs.length ? median(xs) : null;
    };
    const result: FairnessResult = {
      label: a.label!, via, rateMbit,
      quicShare: udpShared / (udpShared + tcpShared),
      quicAloneMbit: mbit(aloneEnd.udpBytes - aloneStart.udpBytes, aloneEnd.t - aloneStart.t),
      quicSharedMbit: mbit(udpShared, sharedEnd.t - sharedStart.t),
      tcpSharedMbit: mbit(tcpShared, sharedEnd.t - sharedStart.t),
      queueDelayAloneMs: median(phase(1000, aloneMs).map(delayMs)),
      queueDelaySharedMs: median(phase(aloneMs + 1000, Infinity).map(delayMs)),
      srttAloneMs: qlogPhase(1000, aloneMs, 'srtt'),
      srttSharedMs: qlogPhase(aloneMs + 1000, aloneMs + bothMs, 'srtt'),
      cwndAloneKb: (qlogPhase(1000, aloneMs, 'cwnd') ?? NaN) / 1000 || null,
      cwndSharedKb: (qlogPhase(aloneMs + 1000, aloneMs + bothMs, 'cwnd') ?? NaN) / 1000 || null,
      fetches, errors,
    };
    writeFileSync(a.out!, JSON.stringify({ ...result, samples }));
    console.log(JSON.stringify(result));
  } finally {
    stopQuic = true;
    await browser.close();
  }
}

function summary(files: string[]): void {
  const results = files.map((f) => JSON.parse(readFileSync(f, 'utf8')) as FairnessResult);
  const groups = new Map<string, FairnessResult[]>();
  for (const r of results) groups.set(`${r.label}|${r.via}`, [...(groups.get(`${r.label}|${r.via}`) ?? []), r]);
  const cell = (xs: (number | null)[], digits = 1) => {
    const v = xs.filter((x): x is number => x !== null && Number.isFinite(x));
    return v.length ? `${median(v).toFixed(digits)} (${Math.min(...v).toFixed(digits)}–${Math.max(...v).toFixed(digits)})` : '–';
  };
  console.log('| origin setting | path | runs | QUIC share, shared phase | QUIC Mbit/s alone → shared | TCP Mbit/s shared | queue delay ms alone → shared | origin sRTT ms alone → shared | origin cwnd kB alone → shared |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const [key, rs] of groups) {
    const [label, via] = key.split('|');
    const errors = rs.reduce((n, r) => n + r.errors.length, 0);
    console.log(`| ${label} | ${via} | ${rs.length}${errors ? ` (${errors} errors)` : ''} | ${cell(rs.map((r) => r.quicShare * 100), 0)} % | ${cell(rs.map((r) => r.quicAloneMbit))} → ${cell(rs.map((r) => r.quicSharedMbit))} | ${cell(rs.map((r) => r.tcpSharedMbit))} | ${cell(rs.map((r) => r.queueDelayAloneMs), 0)} → ${cell(rs.map((r) => r.queueDelaySharedMs), 0)} | ${cell(rs.map((r) => r.srttAloneMs), 0)} → ${cell(rs.map((r) => r.srttSharedMs), 0)} | ${cell(rs.map((r) => r.cwndAloneKb), 0)} → ${cell(rs.map((r) => r.cwndSharedKb), 0)} |`);
  }
}

const [command, ...rest] = process.argv.slice(2);
if (command === 'run') await run();
else if (command === 'summary') summary(rest);
else {
  console.error('usage: tsx scripts/bench/fairness.ts run|summary … (see the comment at the top)');
  process.exit(2);
}
