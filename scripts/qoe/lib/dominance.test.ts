import { describe, expect, it } from 'vitest';
import { aggregate, type Cell, type RunRecord, toRow } from './aggregate';
import { checkDominance, dominanceMarkdown } from './dominance';
import { renderReport } from './report';
import { qoe, record } from './testSupport';

/** Runs of `mode` at 5 % loss, one per entry: [visible quality, freezes]. */
function runs(mode: string, results: Array<[quality: number, freezes: number]>, loss = 5): RunRecord[] {
  return results.map(([quality, freezes], rep) => record(`${mode}-${loss}-${rep}`, mode, loss, rep, qoe(Array<number>(freezes).fill(0.5), quality)));
}

const check = (records: RunRecord[]) => checkDominance(aggregate(records.map(toRow)));

describe('dominance check', () => {
  // qr: mean 3, sd 1 over 3 runs: 95 % interval 3 ± 2.48 (t = 4.303), lower bound 0.52.
  const qr = runs('qr', [[2, 0], [3, 0], [4, 0]]);
  const qpr = runs('qpr', [[1, 1], [1, 1], [1, 1]]);

  it('holds when adaptive is at or above the best fixed mode and freezes no more than the fewest', () => {
    const [row] = check([...qr, ...qpr, ...runs('adaptive', [[3, 0], [3, 0], [3, 0]])]);
    expect(row.bestFixed?.mode).toBe('qr');
    expect(row.quality).toBe('above');
    expect(row.fewestFreezes).toEqual({ perRun: 0, modes: ['qr'] });
    expect(row.freezes).toBe(true);
    expect(row.holds).toBe(true);
  });

  it("holds inside the best mode's 95 % interval, fails below its lower bound", () => {
    // 0.6 is inside 3 ± 2.48 (a normal-quantile interval, 3 ± 1.13, would exclude it).
    const within = check([...qr, ...qpr, ...runs('adaptive', [[0.6, 0], [0.6, 0], [0.6, 0]])])[0];
    expect(within.quality).toBe('within');
    expect(within.holds).toBe(true);
    const below = check([...qr, ...qpr, ...runs('adaptive', [[0.5, 0], [0.5, 0], [0.5, 0]])])[0];
    expect(below.quality).toBe('below');
    expect(below.holds).toBe(false);
  });

  it('fails on more freezes than the fewest of any fixed mode, whatever its quality', () => {
    const [row] = check([...qr, ...qpr, ...runs('adaptive', [[4, 1], [4, 0], [4, 0]])]);
    expect(row.quality).toBe('above');
    expect(row.freezes).toBe(false);
    expect(row.holds).toBe(false);
  });

  it('checks each cell (condition × loss) on its own and leaves a cell without adaptive undecided', () => {
    const lossless = [...runs('qr', [[4, 0], [4, 0]], 0), ...runs('adaptive', [[1, 0], [1, 0]], 0)];
    const slow = runs('adaptive', [[3, 0], [3, 0], [3, 0]]).map((r) => ({ ...r, run: { ...r.run, id: `slow-${r.run.id}`, delayMs: 50 } }));
    const rows = check([...qr, ...qpr, ...lossless, ...slow]);
    expect(rows.map((r) => [r.condition, r.lossPct, r.holds])).toEqual([['t', 0, false], ['t', 5, null], ['t · 50 ms one-way', 5, null]]);
  });

  it('does not call a cell held while some of adaptive\'s runs failed, and notes a best mode of one run', () => {
    const failed = record('adaptive-x', 'adaptive', 5, 3, null);
    const [row] = check([...qr, ...runs('adaptive', [[3, 0], [3, 0]]), failed]);
    expect(row.holds).toBeNull();
    expect(row.notes).toContain("1 of adaptive's 3 runs failed");
    const [single] = check([...runs('qr', [[3, 0]]), ...runs('adaptive', [[2.9, 0]])]);
    expect(single.quality).toBe('below');
    expect(single.notes).toContain('qr has 1 run: no interval, means compared');
  });

  it('compares seen quality the same way, beside the verdict and outside it', () => {
    const cells = aggregate([...qr, ...qpr, ...runs('adaptive', [[3, 0], [3, 0], [3, 0]])].map(toRow));
    const seen = (mode: string, mean: number, ci95: number) => { cells.find((c) => c.mode === mode)!.meanSeenQuality = { mean, ci95, n: 3 } as Cell['meanSeenQuality']; };
    seen('qr', 2.0, 0.1);
    seen('qpr', 2.6, 0.2);
    seen('adaptive', 2.3, 0.05);
    const [row] = checkDominance(cells);
    // Visible quality holds (3 against qr's 3); seen quality is below qpr's interval, and the verdict stands.
    expect(row.holds).toBe(true);
    expect(row.seen.bestFixed?.mode).toBe('qpr');
    expect(row.seen.quality).toBe('below');
    expect(dominanceMarkdown(cells)).toContain('| yes | below: 2.30 ± 0.05 vs 2.60 ± 0.20 (qpr) |');
    seen('adaptive', 2.45, 0.05);
    expect(checkDominance(cells)[0].seen.quality).toBe('within');
  });

  it('renders as a Markdown table with the best fixed mode in bold, and in the HTML report', () => {
    const records = [...qr, ...qpr, ...runs('adaptive', [[3, 0], [3, 0], [3, 0]])];
    const md = dominanceMarkdown(aggregate(records.map(toRow)));
    expect(md).toContain('1 of 1 cells hold, 0 do not, 0 undecided.');
    expect(md).toContain('| condition | loss | qr | qpr | adaptive | best fixed | adaptive vs best (quality) | adaptive freezes vs fewest | holds | seen quality: adaptive vs best fixed |');
    // The test logs carry no seen areas: no seen-quality verdict.
    expect(md).toContain('| t | 5 % | **3.00 ± 2.48 · 0.0 ± 0.0 fr.** | 1.00 ± 0.00 · 1.0 ± 0.0 fr. | 3.00 ± 0.00 · 0.0 ± 0.0 fr. | qr | above | ≤ 0.0 (qr) | yes | – |');
    expect(md).toContain('Student t');
    const html = renderReport({ title: 'd', provenance: [], records });
    expect(html).toContain('<h2>adaptive against the best fixed mode (goal: in every cell)</h2><p>1 of 1 cells hold.</p>');
    expect(html).toContain('<td class="best">3.00 ± 2.48 · 0.0 ± 0.0 fr.</td>');
    expect(html).toContain('95 % confidence interval of the mean over repetitions (Student t');
    // Bars carry the interval as whiskers (qr's visible quality: 3 ± 2.48).
    expect(html).toContain('qr 5 %: 3 ± 2.48');
    expect(html).toContain('class="ci"');
  });
});
