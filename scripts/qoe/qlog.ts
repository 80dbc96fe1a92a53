/**
 * What the origin's congestion controller saw and did on one QUIC connection, from the qlog a QoE
 * run kept (`run.ts --qlog`): per interval the rate sent, BBR2's delivery and pacing rates, its
 * window, the smoothed RTT and the losses; then the time in each controller state and its longest
 * stay (a probe the sender's demand never fills shows as a long `bbr_probe_bw_up`).
 *
 *   npx tsx scripts/qoe/qlog.ts results/qoe/<name>/work/<run> [--bin 5]
 *   npx tsx scripts/qoe/qlog.ts path/to/connection.sqlog
 *
 * A run directory holds one qlog per connection; the largest (the WebTransport session's) is read.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { readQlogEvents, summarizeQlog } from './lib/qlog';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { bin: { type: 'string', default: '5' } } });
const target = positionals[0];
const binS = Number(values.bin);
if (!target || !(binS > 0)) {
  console.error('usage: qlog.ts <run directory | file.sqlog> [--bin SECONDS]');
  process.exit(2);
}

/** The file to read: the path itself, or the largest `.sqlog` of a run directory (or its `qlog/`). */
function qlogFile(path: string): string {
  if (!statSync(path).isDirectory()) return path;
  const dir = readdirSync(path).includes('qlog') ? join(path, 'qlog') : path;
  const files = readdirSync(dir).filter((f) => f.endsWith('.sqlog')).map((f) => join(dir, f));
  if (files.length === 0) throw new Error(`no .sqlog in ${dir}: was the run made with --qlog?`);
  return files.reduce((a, b) => (statSync(b).size > statSync(a).size ? b : a));
}

const file = qlogFile(target);
const { intervals, states } = summarizeQlog(readQlogEvents(readFileSync(file, 'utf8')), binS);
const f1 = (x: number) => (Number.isNaN(x) ? '—' : x.toFixed(1));
console.log(file);
console.log('from s | sent Mbit/s | delivery rate | pacing rate | window kB | srtt ms | lost');
for (const i of intervals) {
  console.log([i.fromS.toFixed(0).padStart(6), f1(i.sentMbps).padStart(11), f1(i.deliveryRateMbps).padStart(13), f1(i.pacingRateMbps).padStart(11),
    f1(i.congestionWindowKB).padStart(9), (Number.isNaN(i.smoothedRttMs) ? '—' : i.smoothedRttMs.toFixed(0)).padStart(7), String(i.lostPackets).padStart(4)].join(' | '));
}
console.log('\nstate | total s | entries | longest s (from s)');
for (const s of states) console.log(`${s.state} | ${s.totalS.toFixed(1)} | ${s.entries} | ${s.longestS.toFixed(1)} (${s.longestFromS.toFixed(1)})`);
