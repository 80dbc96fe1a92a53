/**
 * Origin benchmarks (docs/benchmarks.md → "Origin"), with the real origin binary and real headless
 * Chromium driving the transport check page (e2e/pages/transport.html):
 *
 *   npx tsx scripts/bench/origin.ts loopback [--mb 8] [--runs 10] [--cc bbr2] [--paths reliable,datagram,http2]
 *       [--fec-loss 0]
 *       Throughput origin → Chromium on loopback per delivery path, and origin CPU seconds per GB
 *       of payload (utime + stime of the origin from /proc/<pid>/stat over the timed fetches).
 *       Datagrams use planned FEC for --fec-loss (default 0: no repair unless asked for, so no
 *       RaptorQ encoding; e.g. 0.05 plans repair and pays for the encoder). Objects of several
 *       source sub-blocks (above ~10 MB) decode too since the sub-block fix (docs/benchmarks.md).
 *   npx tsx scripts/bench/origin.ts lossy [--cc cubic,bbr2] [--loss 0,1,5] [--rate-mbit 20]
 *       [--delay-ms 10] [--mb 5] [--runs 3] [--paths datagram,reliable] [--qlog DIR] [--lossless-upstream]
 *       Goodput through `holoquic-impair relay` (rate limit, one-way delay, Gilbert–Elliott loss in
 *       both directions, docs/qoe.md) per congestion control and loss level. Datagram requests use
 *       planned FEC with the configured loss rate and burst length. --lossless-upstream keeps the
 *       client → origin direction (ACKs) free of loss.
 *
 * Options for both: --origin BIN (default server/target/release/holoquic-origin), --web DIR
 * (default dist), --origin-args "…" (extra origin flags, e.g. "--loss-tolerance 0"). Prints one JSON line per fetch, then a summary table (median, min–max).
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { TransportTestResult } from '../../e2e/pages/transport';
import { type Browser, launch } from '../../e2e/lib/browser';
import { DIST, IMPAIR_BIN, ORIGIN_BIN, type Running, spkiHash, start } from '../../e2e/lib/processes';

type Via = 'reliable' | 'datagram' | 'http2';

/** Gilbert–Elliott parameters per loss percentage, with their mean loss-burst length (docs/qoe.md). */
const GE: Record<string, { ge: string; burst: number }> = {
  '0.5': { ge: '0.0576,10,70,0.1', burst: 2.02 },
  '1': { ge: '0.1304,10,70,0.1', burst: 2.32 },
  '2': { ge: '0.2794,10,70,0.1', burst: 2.5 },
  '5': { ge: '0.7538,10,70,0.1', burst: 2.62 },
};

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    mb: { type: 'string' },
    runs: { type: 'string' },
    cc: { type: 'string' },
    paths: { type: 'string' },
    loss: { type: 'string', default: '0,1,5' },
    'rate-mbit': { type: 'string', default: '20' },
    'delay-ms': { type: 'string', default: '10' },
    qlog: { type: 'string' },
    origin: { type: 'string', default: ORIGIN_BIN },
    web: { type: 'string', default: DIST },
    'origin-args': { type: 'string', default: '' },
    'fec-loss': { type: 'string', default: '0' },
    'lossless-upstream': { type: 'boolean', default: false },
  },
});

const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** CPU seconds (user + system) a process has used so far. */
function cpuSeconds(pid: number): number {
  // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

function spread(xs: number[], digits = 1): string {
  return `${median(xs).toFixed(digits)} (${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)})`;
}

interface Origin extends Running {
  pid: number;
  quicPort: number;
  httpBase: string;
  httpsBase: string;
}

async function startOrigin(content: string, cc: string, qlog?: string): Promise<Origin> {
  const extra = ['--cc', cc, ...(qlog ? ['--qlog-dir', qlog] : []), ...args['origin-args']!.split(' ').filter(Boolean)];
  const { running, match } = await start(
    args.origin!,
    ['--listen', '127.0.0.1:0', '--http-listen', '127.0.0.1:0', '--content', content, '--web', args.web!, '--cors', ...extra],
    /holoquic-origin: listening quic=\S+:(\d+) https=\S+ http=\S+:(\d+)/,
  );
  const quicPort = Number(match[1]);
  return { ...running, pid: running.process.pid!, quicPort, httpBase: `http://127.0.0.1:${match[2]}`, httpsBase: `https://127.0.0.1:${quicPort}` };
}

async function openPage(origin: Origin, wtUrl?: string): Promise<Browser> {
  const browser = await launch({ spki: await spkiHash('127.0.0.1', origin.quicPort) });
  const query = new URLSearchParams({ https: origin.httpsBase, ...(wtUrl ? { wt: wtUrl } : {}) });
  await browser.page.goto(`${origin.httpBase}/e2e/pages/transport.html?${query}`);
  const connected = await browser.page.evaluate(() => window.holoquicTransportTest.connect());
  if (!connected.webtransport) throw new Error(`no WebTransport session: ${JSON.stringify(connected)}\n${browser.log.join('\n')}`);
  return browser;
}

interface Fetched {
  result: TransportTestResult;
  /** Request → last byte (or decode), ms. */
  ms: number;
  /** Object goodput: object bits over request → last byte (datagrams: → decoded). */
  mbits: number;
  /** Delivered rate: payload bits received (datagrams: every symbol that arrived, repair included)
   *  over first byte → last byte; what the path carried for this request. */
  deliveredMbits: number;
}

async function fetchObject(browser: Browser, path: string, via: Via, fec?: unknown): Promise<Fetched> {
  const result = await browser.page.evaluate(([p, o]) => window.holoquicTransportTest.fetch(p as string, o as never), [path, { via, fec }] as const);
  const stats = result.stats as { requestedAt: number; firstByteAt?: number; lastByteAt?: number; receivedBytes: number } | null;
  if (result.error || !stats?.lastByteAt) throw new Error(`${via} ${path}: ${result.error ?? 'no timing'}\n${browser.log.slice(-5).join('\n')}`);
  const ms = stats.lastByteAt - stats.requestedAt;
  const transferMs = stats.lastByteAt - (stats.firstByteAt ?? stats.requestedAt);
  return { result, ms, mbits: (result.bytes * 8) / (ms * 1000), deliveredMbits: (stats.receivedBytes * 8) / (transferMs * 1000) };
}

function writeContent(mb: number): { dir: string; path: string } {
  const dir = mkdtempSync(join(tmpdir(), 'holoquic-bench-'));
  mkdirSync(join(dir, 'bench'));
  writeFileSync(join(dir, 'bench', 'object.bin'), randomBytes(Math.round(mb * 1e6)));
  return { dir, path: '/content/bench/object.bin' };
}

function list(value: string | undefined, fallback: string): string[] {
  return (value ?? fallback).split(',').map((s) => s.trim()).filter(Boolean);
}

async function loopback(): Promise<void> {
  const mb = Number(args.mb ?? 8);
  const runs = Number(args.runs ?? 10);
  const { dir, path } = writeContent(mb);
  const origin = await startOrigin(dir, args.cc ?? 'bbr2');
  const browser = await openPage(origin);
  const rows: string[] = [];
  try {
    await runLoopback();
  } catch (e) {
    console.error(`origin output (tail):\n${origin.output().slice(-3000)}`);
    throw e;
  } finally {
    await browser.close();
    await origin.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  console.log('\n| path | object × runs | Mbit/s median (min–max) | origin CPU s per GB (all runs) | Gbit/s of payload per origin core |\n|---|---|---|---|---|');
  console.log(rows.join('\n'));

  async function runLoopback(): Promise<void> {
    for (const via of list(args.paths, 'reliable,datagram,http2') as Via[]) {
      const fec = via === 'datagram' ? { kind: 'planned', lossRate: Number(args['fec-loss']) } : undefined;
      await fetchObject(browser, path, via, fec); // warm-up (page caches nothing: fresh request each time)
      const mbits: number[] = [];
      let bytes = 0;
      // CPU over all runs together: /proc counts in clock ticks (10 ms), too coarse per fetch.
      const cpuStart = cpuSeconds(origin.pid);
      for (let i = 0; i < runs; i++) {
        const f = await fetchObject(browser, path, via, fec);
        mbits.push(f.mbits);
        bytes += f.result.bytes;
        console.log(JSON.stringify({ bench: 'loopback', via, bytes: f.result.bytes, ms: +f.ms.toFixed(1), mbits: +f.mbits.toFixed(1), stats: f.result.stats }));
      }
      const cpuPerGb = (cpuSeconds(origin.pid) - cpuStart) / (bytes / 1e9);
      rows.push(`| ${via} | ${mb} MB × ${runs} | ${spread(mbits, 0)} | ${cpuPerGb.toFixed(2)} | ${(8 / cpuPerGb).toFixed(2)} |`);
    }
  }
}

async function lossy(): Promise<void> {
  const mb = Number(args.mb ?? 5);
  const runs = Number(args.runs ?? 3);
  const rate = args['rate-mbit']!;
  const { dir, path } = writeContent(mb);
  const rows: string[] = [];
  try {
    for (const cc of list(args.cc, 'cubic,bbr2')) {
      for (const loss of list(args.loss, '0,1,5')) {
        if (loss !== '0' && !GE[loss]) throw new Error(`no Gilbert–Elliott parameters for ${loss} % (have ${Object.keys(GE).join(', ')})`);
        const qlog = args.qlog ? resolve(args.qlog, `${cc}-${loss}`) : undefined;
        if (qlog) mkdirSync(qlog, { recursive: true });
        const origin = await startOrigin(dir, cc, qlog);
        const statsFile = join(dir, `relay-${cc}-${loss}.json`);
        const impairment = ['--rate-mbit', rate, '--delay-ms', args['delay-ms']!, '--seed', '7', '--stats-file', statsFile];
        if (loss !== '0') impairment.push('--ge', GE[loss].ge);
        if (args['lossless-upstream']) impairment.push('--lossless-upstream');
        const { running: relay, match } = await start(IMPAIR_BIN, ['relay', '--listen', '127.0.0.1:0', '--upstream', `127.0.0.1:${origin.quicPort}`, ...impairment], /relaying \S+:(\d+) ->/);
        let browser: Browser | undefined;
        try {
          browser = await openPage(origin, `https://127.0.0.1:${match[1]}/holoquic`);
          for (const via of list(args.paths, 'datagram,reliable') as Via[]) {
            const fec = via === 'datagram' ? { kind: 'planned', lossRate: Number(loss) / 100, meanBurstLength: GE[loss]?.burst } : undefined;
            const mbits: number[] = [];
            const delivered: number[] = [];
            for (let i = 0; i < runs; i++) {
              const f = await fetchObject(browser, path, via, fec);
              mbits.push(f.mbits);
              delivered.push(f.deliveredMbits);
              console.log(JSON.stringify({ bench: 'lossy', cc, loss, via, bytes: f.result.bytes, ms: +f.ms.toFixed(1), mbits: +f.mbits.toFixed(2), deliveredMbits: +f.deliveredMbits.toFixed(2), stats: f.result.stats }));
            }
            rows.push(`| ${cc} | ${loss} % | ${via} | ${spread(mbits, 1)} | ${spread(delivered, 1)} |`);
          }
        } finally {
          await browser?.close();
          await relay.stop();
          await origin.stop();
          try {
            console.log(JSON.stringify({ relay: JSON.parse(readFileSync(statsFile, 'utf8')) }));
          } catch {
            // no counters written yet
          }
        }
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(`\n${rate} Mbit/s, ${args['delay-ms']} ms each way, ${mb} MB objects, ${runs} runs\n| cc | loss | path | object goodput Mbit/s median (min–max) | delivered Mbit/s median (min–max) |\n|---|---|---|---|---|`);
  console.log(rows.join('\n'));
}

const command = positionals[0];
if (command === 'loopback') await loopback();
else if (command === 'lossy') await lossy();
else {
  console.error('usage: npx tsx scripts/bench/origin.ts loopback|lossy [options] (see the comment at the top)');
  process.exit(2);
}
