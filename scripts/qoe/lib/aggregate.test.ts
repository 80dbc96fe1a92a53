import { describe, expect, it } from 'vitest';
import { aggregate, cdf, combineSources, keptOnResume, measuredLossPct, originFecOverhead, parsePrometheusText, parseQdiscStats, parseTcpCounters, parseUdpSnmp, queueDropPct, queueMsOf, type RunRecord, sameSettings, stat, toRow } from './aggregate';
import { markdownSummary, runsCsv } from './summary';
import { barChart, lineChart, ticks } from './svg';
import { qoe, record } from './testSupport';

describe('aggregate', () => {
  it('groups repetitions per trace, loss and mode, averaging and counting failures', () => {
    const rows = [
      record('a', 'qr', 5, 0, qoe([1, 2], 1)),
      record('b', 'qr', 5, 1, qoe([], 3)),
      record('c', 'qr', 5, 2, null),
      record('d', 'qpr-fec', 5, 0, qoe([], 4)),
    ].map(toRow);
    const cells = aggregate(rows);
    expect(cells.map((c) => c.mode)).toEqual(['qr', 'qpr-fec']);
    const qr = cells[0];
    expect(qr.runs).toBe(3);
    expect(qr.failed).toBe(1);
    expect(qr.freezeCount.mean).toBe(1);
    expect(qr.freezeTotalS.mean).toBe(1.5);
    expect(qr.meanQuality.mean).toBe(2);
    expect(qr.measuredLossPct.mean).toBe(5);
    expect(qr.throughputSamplesMbps).toHaveLength(6);
    expect(qr.throughputSamplesMbps[0]).toBeCloseTo(2);
    expect(cells[1].fecOverhead.mean).toBeCloseTo(0.1);
  });

  it('does not count a run whose page failed, fell back to HTTP/2, never started or stopped early', () => {
    const good = qoe([], 2);
    const cases: Array<[RunRecord, RegExp]> = [
      [{ ...record('a', 'qr', 5, 0, good), error: 'page state "loading" after 180 s' }, /loading/],
      [record('b', 'qpr-fec', 5, 0, { ...good, config: { ...good.config, transport: 'http2' } }), /fell back to HTTP\/2/],
      [record('c', 'qr', 5, 0, { ...good, segments: [], playback: { startupS: NaN, playedS: 0, wallS: 4 } }), /never started/],
      [record('d', 'qr', 5, 0, { ...good, playback: { ...good.playback, wallS: 1.2 } }), /ends after 1.2 s of 3 s/],
    ];
    for (const [r, why] of cases) {
      const row = toRow(r);
      expect(row.ok, r.run.id).toBe(false);
      expect(row.error).toMatch(why);
    }
    // h2 runs are HTTP/2 by definition.
    expect(toRow(record('e', 'h2', 5, 0, { ...good, config: { ...good.config, transport: 'http2' } })).ok).toBe(true);
  });

  it('writes one CSV line per run, failures included with their reason', () => {
    const csv = runsCsv([record('a', 'qr', 1, 0, qoe([1], 2)), record('b', 'qr', 1, 1, null)].map(toRow)).trim().split('\n');
    expect(csv).toHaveLength(3);
    expect(csv[0].split(',')).toContain('freezeTotalS');
    expect(csv[2]).toContain('page never reached playing');
  });
});

describe('combineSources', () => {
  const matrix = [record('a', 'h2', 5, 0, qoe([9], 1)), record('b', 'qr', 5, 0, qoe([], 3)), record('c', 'qr', 1, 0, qoe([], 3))]
    .map((r) => ({ ...r, commit: 'old' }));
  const column = [record('d', 'h2', 5, 0, qoe([], 2)), record('e', 'h2', 1, 0, qoe([], 2))].map((r) => ({ ...r, commit: 'new' }));

  it('takes the chosen modes of each source, each run keeping its commit', () => {
    const runs = combineSources([{ label: 'matrix', modes: ['qr'], records: matrix }, { label: 'column', modes: ['h2'], records: column }]);
    expect(runs.map((r) => [r.run.id, r.commit])).toEqual([['b', 'old'], ['c', 'old'], ['d', 'new'], ['e', 'new']]);
    const csv = runsCsv(runs.map(toRow)).trim().split('\n');
    const commitColumn = csv[0].split(',').indexOf('commit');
    expect(csv.slice(1).map((line) => line.split(',')[commitColumn])).toEqual(['old', 'old', 'new', 'new']);
    const cells = aggregate(runs.map(toRow));
    expect(cells.find((c) => c.mode === 'h2' && c.lossPct === 5)?.freezeCount.mean).toBe(0);
    // The baseline keeps its row first although the first source has no h2 runs.
    expect(markdownSummary(cells)).toMatch(/\| `h2` \|[^\n]*\n\| `qr` \|/);
  });

  it('refuses a cell measured in two sources, and a source that gives nothing', () => {
    expect(() => combineSources([{ label: 'matrix', records: matrix }, { label: 'column', records: column }]))
      .toThrow(/t at 5 % loss, h2: runs in both matrix and column/);
    expect(() => combineSources([{ label: 'matrix', modes: ['qpr'], records: matrix }])).toThrow(/matrix: no runs of qpr/);
  });
});

describe('originFecOverhead', () => {
  it("is the repair the origin sent over the source symbols, NaN without the origin's counters", () => {
    expect(originFecOverhead({ symbols_sent_total: 1350, source_symbols_total: 1000 })).toBeCloseTo(0.35);
    expect(originFecOverhead({ symbols_sent_total: 1350 })).toBeNaN(); // an origin from before the counter
    expect(originFecOverhead(undefined)).toBeNaN();
  });
});

describe('sameSettings', () => {
  it('lets a resumed matrix keep a run only if it was measured the same way', () => {
    const run = record('a', 'qr', 5, 0, null).run;
    expect(sameSettings(run, { ...run })).toBe(true);
    // Defaults written out or left out are the same settings; option order does not matter.
    expect(sameSettings(run, { ...run, lossDirection: 'down' })).toBe(true);
    expect(sameSettings({ ...run, page: { buffer: '2', abr: 'x' } }, { ...run, page: { abr: 'x', buffer: '2' } })).toBe(true);
    for (const other of [{ durationS: 60 }, { congestionControl: 'cubic' as const }, { page: { buffer: '4' } }, { traceScale: 0.2 }, { delayMs: 20 }, { lossBadMs: 10 }, { queueRtts: 5 }]) {
      expect(sameSettings(run, { ...run, ...other }), JSON.stringify(other)).toBe(false);
    }
  });
});

describe('keptOnResume', () => {
  it('keeps a usable run of the same settings, and makes again a failed run, a fallback or a run of other settings', () => {
    const good = qoe([], 2);
    const usable = record('a', 'qr', 5, 0, good);
    expect(keptOnResume(usable, { ...usable.run })).toBe(true);
    expect(keptOnResume(record('a', 'qr', 5, 0, null), usable.run)).toBe(false);
    expect(keptOnResume(usable, { ...usable.run, delayMs: 50 })).toBe(false);
    // A WebTransport mode that began on the HTTP/2 fallback measured the fallback, without an error.
    const fellBack = record('a', 'qr', 5, 0, { ...good, config: { ...good.config, transport: 'http2' } });
    expect(fellBack.error).toBeUndefined();
    expect(keptOnResume(fellBack, fellBack.run)).toBe(false);
    // HTTP/2 is the `h2` mode's own transport.
    const h2 = record('b', 'h2', 5, 0, { ...good, config: { ...good.config, transport: 'http2' } });
    expect(keptOnResume(h2, h2.run)).toBe(true);
  });
});

describe('queueMsOf', () => {
  it('is the usual 100 ms, or the given round trips of the path (at least 10 ms)', () => {
    expect(queueMsOf({ delayMs: 50 })).toBe(100);
    expect(queueMsOf({ delayMs: 10, queueRtts: 5 })).toBe(100);
    expect(queueMsOf({ delayMs: 50, queueRtts: 5 })).toBe(500);
    expect(queueMsOf({ delayMs: 0, queueRtts: 5 })).toBe(10);
  });
});

describe('statistics helpers', () => {
  it('stat ignores NaN and gives the sample standard deviation', () => {
    const s = stat([1, 3, NaN]);
    expect([s.mean, s.sd, s.n]).toEqual([2, Math.SQRT2, 2]);
    expect(s.ci95).toBeCloseTo(12.706, 3); // t(0.975, 1) · √2 / √2
    expect(stat([]).n).toBe(0);
  });
  it('cdf is sorted and ends at 1', () => {
    expect(cdf([3, 1, 2])).toEqual([[1, 1 / 3], [2, 2 / 3], [3, 1]]);
  });
  it('measured loss is dropped over seen, counting what the kernel dropped first, unknown without packets', () => {
    expect(measuredLossPct({ seen: 200, dropped_loss: 10 })).toBe(5);
    expect(measuredLossPct({ seen: 190, dropped_loss: 10, kernel_dropped: { queue_full: 4, socket_full: 6 } })).toBe(10);
    expect(measuredLossPct({ seen: 0, dropped_loss: 0 })).toBeNaN();
  });
  it('reads the bottleneck queue from tc -s qdisc and its drop share of what was offered', () => {
    const text = 'qdisc tbf 8001: root refcnt 2 rate 4Mbit burst 16Kb lat 100ms\n' +
      ' Sent 32685810 bytes 24763 pkt (dropped 237, overlimits 5120 requeues 0)\n backlog 0b 0p requeues 0\n';
    const counters = parseQdiscStats(text);
    expect(counters).toEqual({ sentPackets: 24763, droppedPackets: 237 });
    expect(queueDropPct(counters)).toBeCloseTo((100 * 237) / 25000, 9);
    expect(parseQdiscStats('Cannot find device "hqveth-a"')).toBeUndefined();
    expect(queueDropPct(undefined)).toBeNaN();
  });
  it('reads the UDP receive-buffer drops of /proc/net/snmp', () => {
    const text = 'Ip: Forwarding DefaultTTL\nIp: 1 64\nUdp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors\n' +
      'Udp: 8433 0 12 2946 12 0\nUdpLite: InDatagrams NoPorts InErrors\nUdpLite: 0 0 0\n';
    expect(parseUdpSnmp(text)).toEqual({ inDatagrams: 8433, rcvbufErrors: 12, inErrors: 12 });
    expect(parseUdpSnmp('Ip: 1 2\n')).toBeUndefined();
  });

  it('reads the TCP counters of /proc/net/snmp and /proc/net/netstat', () => {
    const text = 'Tcp: RtoAlgorithm ActiveOpens OutSegs RetransSegs InErrs\nTcp: 1 3 20000 850 0\n' +
      'TcpExt: SyncookiesSent TCPTimeouts TCPLossProbes\nTcpExt: 0 37 120\n';
    expect(parseTcpCounters(text)).toEqual({ outSegs: 20000, retransSegs: 850, timeouts: 37, lossProbes: 120 });
    expect(parseTcpCounters('Tcp: OutSegs\nTcp: 5\n')).toBeUndefined();
    expect(parseTcpCounters('Tcp: OutSegs RetransSegs\nTcp: 5 1\nTcpExt: TCPTimeouts\nTcpExt: 2\n')).toBeUndefined();
  });

  it('reads Prometheus text samples without the project prefix', () => {
    const text = '# HELP holoquic_symbols_sent_total RaptorQ symbols.\n# TYPE holoquic_symbols_sent_total counter\n' +
      'holoquic_symbols_sent_total 42\nholoquic_sessions_active 0\nother_metric 1.5\nbroken line here\n';
    expect(parsePrometheusText(text)).toEqual({ symbols_sent_total: 42, sessions_active: 0, other_metric: 1.5 });
  });
});

describe('svg charts', () => {
  it('produce standalone SVG with one path per series and escaped labels', () => {
    const svg = lineChart({ title: 'a < b', xLabel: 'x', yLabel: 'y', step: true,
      series: [{ name: 'qr', points: [[0, 0], [1, 1]] }, { name: 'qpr-fec', points: [[0, 0.5], [2, 1]] }] });
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg.match(/<path /g)).toHaveLength(2);
    expect(svg).toContain('a &lt; b');
    const bars = barChart({ title: 't', yLabel: 'y', categories: ['0%', '5%'], series: [{ name: 'qr', values: [1, NaN] }] });
    expect(bars.match(/<rect [^>]*fill="#/g)).toHaveLength(2); // one bar + one legend swatch
  });
  it('ticks are round numbers covering the range', () => {
    expect(ticks(0, 10)).toEqual([0, 2, 4, 6, 8, 10]);
    expect(ticks(0, 1)).toEqual([0, 0.2, 0.4, 0.6, 0.8, 1]);
  });
});

describe('markdown summary', () => {
  it("puts freezes in the paper's Table 3 layout, modes by loss level, before the full table", () => {
    const cells = aggregate([
      record('a', 'qr', 5, 0, qoe([1, 2], 1)),
      record('b', 'qr', 5, 1, qoe([], 3)),
      record('c', 'qpr-fec', 5, 0, qoe([], 4)),
      record('d', 'qpr-fec', 0, 0, qoe([0.001], 4)),
      record('e', 'qr', 0, 0, null),
    ].map(toRow));
    const md = markdownSummary(cells);
    expect(md).toContain('#### t: freezes per run / seconds frozen per run');
    expect(md).toContain('| mode | 0 % | 5 % |');
    // qr at 0 % only failed: nothing measured; at 5 %: (2 + 0) / 2 freezes, (3 + 0) / 2 s, each
    // with its 95 % interval over the two runs (t = 12.71 for one degree of freedom).
    expect(md).toContain('| `qr` | – | 1.0 ± 12.7 / 1.50 ± 19.06 s |');
    expect(md).toContain('| `qpr-fec` | 1.0 / < 0.01 s | **0** |');
    expect(md.indexOf('freezes per run')).toBeLessThan(md.indexOf('| loss | mode | runs |'));
    // Beside it, the visible quality of the same cells with the runs it averages.
    expect(md).toContain('#### t: visible quality (runs)');
    expect(md).toContain('| `qr` | – | 2.00 ± 12.71 (2) |');
    expect(md).toContain('| `qpr-fec` | 4.00 (1) | 4.00 (1) |');
  });
});

describe('report', () => {
  it('renders tables, figures and goal checks from run records', async () => {
    const { renderReport, checkGoals } = await import('./report');
    const records = [
      record('a', 'qr', 5, 0, qoe([1, 2], 1)),
      record('b', 'qpr-fec', 5, 0, qoe([], 3)),
      record('c', 'qpr-fec', 0, 0, qoe([], 4)),
      record('d', 'qr', 0, 0, null),
    ];
    const html = renderReport({ title: 'smoke', provenance: ['cmd'], records });
    expect(html).toContain('<h1>smoke</h1>');
    expect(html).toContain('4 runs, 1 failed.');
    expect(html).toContain('Throughput CDF, 5 % loss');
    expect(html).toContain('page never reached playing');
    expect(html).toContain('Visible quality');
    // Run a froze twice (at 0 s for 1 s, at 1 s for 2 s); nothing else froze.
    expect(html).toContain('<td>qr</td><td>5 %</td><td>0</td><td>0.0 s (1.00 s), 1.0 s (2.00 s)</td>');
    expect(html.match(/<td>qpr-fec<\/td><td>[0-9.]+ %<\/td><td>0<\/td>/g)).toBeNull();
    const goals = checkGoals(aggregate(records.map(toRow)));
    const freezeGoal = goals.find((g) => g.goal.includes('no freezes in qpr-fec'));
    expect(freezeGoal?.met).toBe(true);
    const ratioGoal = goals.find((g) => g.goal.includes('1.5'));
    expect(ratioGoal?.met).toBe(false); // same per-segment throughput in both synthetic logs
    // 1.5 × qr at 5 % (1.5 × 2 Mbit/s) is above the best mode at 0 % (qpr-fec, 2 Mbit/s): said so.
    expect(ratioGoal?.detail).toContain('the target, 3.0 Mbit/s, is above every mode\'s throughput at 0 % loss (at most 2.0)');
  });

  it('lists each distinct network and player setting of its runs', async () => {
    const { describeSettings } = await import('./report');
    const plain = record('a', 'qr', 0, 0, null);
    const lossy = record('b', 'h2', 5, 0, null);
    lossy.run.ge = '0.7538,10,70,0.1';
    const clocked = { ...lossy, run: { ...lossy.run, lossBadMs: 10, page: { buffer: '4' } } };
    const deepQueue = { ...plain, run: { ...plain.run, delayMs: 50, queueRtts: 5 } };
    expect(describeSettings([plain, lossy, clocked, { ...plain }, deepQueue])).toEqual([
      't × 0.100, 10 ms one-way, 100-ms queue, Gilbert–Elliott loss on a clock (Bad periods of 10 ms) origin → client; origin bbr2 (default); player buffer=4; 3 s',
      't × 0.100, 10 ms one-way, 100-ms queue, Gilbert–Elliott loss per packet (netem gemodel) origin → client; origin bbr2 (default); player defaults; 3 s',
      't × 0.100, 10 ms one-way, 100-ms queue, no loss; origin bbr2 (default); player defaults; 3 s',
      't × 0.100, 50 ms one-way, 500-ms queue (5 round trips), no loss; origin bbr2 (default); player defaults; 3 s',
    ]);
  });

  it('does not call "no freezes" met while some of the runs failed', async () => {
    const { checkGoals } = await import('./report');
    const cells = aggregate([
      record('a', 'qpr-fec', 5, 0, qoe([], 3)),
      record('b', 'qpr-fec', 5, 1, null),
    ].map(toRow));
    const goal = checkGoals(cells).find((g) => g.goal.includes('no freezes in qpr-fec'));
    expect(goal?.met).toBeNull();
    expect(goal?.detail).toContain('1 failed run(s)');
    // A freeze in a run that worked still says no.
    const froze = checkGoals(aggregate([record('c', 'qpr-fec', 5, 0, qoe([0.5], 3)), record('d', 'qpr-fec', 5, 1, null)].map(toRow)));
    expect(froze.find((g) => g.goal.includes('no freezes in qpr-fec'))?.met).toBe(false);
  });
});
