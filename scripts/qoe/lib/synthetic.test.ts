import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseTrace } from '../../../src/viewport/trace';
import { resolvePose, resolveTrace } from './inputs';
import { median, parseBandwidthTrace } from './matrix';
import { SYNTHETIC_BANDWIDTH, SYNTHETIC_POSE, SYNTHETIC_POSE_S, syntheticBandwidthCsv, syntheticPose, syntheticPoseCsv } from './synthetic';

describe('built-in synthetic traces', () => {
  it('are committed exactly as their functions make them (regenerate: npx tsx scripts/qoe/lib/synthetic.ts)', () => {
    expect(readFileSync(SYNTHETIC_BANDWIDTH.file, 'utf8')).toBe(syntheticBandwidthCsv());
    expect(readFileSync(SYNTHETIC_POSE.file, 'utf8')).toBe(syntheticPoseCsv());
  });

  it('bandwidth: 150 one-second steps the runner reads, with troughs well under the median', () => {
    const samples = parseBandwidthTrace(syntheticBandwidthCsv());
    expect(samples).toHaveLength(150);
    const mbps = samples.map((s) => s.mbps);
    expect(median(mbps)).toBeGreaterThan(80);
    expect(median(mbps)).toBeLessThan(120);
    expect(mbps.filter((v) => v < 0.4 * median(mbps)).length).toBeGreaterThanOrEqual(9); // three troughs of 3–5 s
  });

  it('pose: a trace the player parses, unit quaternions, seamless when looped', () => {
    const poses = parseTrace(syntheticPoseCsv(), { convention: 'unity-left-handed', source: 'synthetic' });
    expect(poses).toHaveLength(SYNTHETIC_POSE_S * 20);
    for (const p of poses) expect(Math.hypot(...p.orientation)).toBeCloseTo(1, 5);
    const start = syntheticPose(0), end = syntheticPose(SYNTHETIC_POSE_S);
    for (let i = 0; i < 3; i++) expect(end.position[i]).toBeCloseTo(start.position[i], 9);
    // q and −q are the same rotation: one full turn of yaw flips the sign.
    const dot = start.quaternion.reduce((a, v, i) => a + v * end.quaternion[i], 0);
    expect(Math.abs(dot)).toBeCloseTo(1, 9);
    // The head turns all the way round: yaw passes every quadrant within the span.
    const forwardX = poses.map((p) => Math.sign(Math.round(100 * (2 * (p.orientation[0] * p.orientation[2] + p.orientation[3] * p.orientation[1])))));
    expect(new Set(forwardX)).toEqual(new Set([-1, 0, 1]));
  });

  it('resolve by name without the evaluation data, and real traces by path', () => {
    const roots = { root: '/nonexistent-checkout', shared: '/nonexistent-shared' };
    expect(resolveTrace('synthetic', roots)).toBe(SYNTHETIC_BANDWIDTH.file);
    expect(resolvePose('synthetic', roots)).toBe(SYNTHETIC_POSE.file);
    expect(resolveTrace(SYNTHETIC_POSE.file, roots)).toBe(SYNTHETIC_POSE.file); // any existing .csv by absolute path
    expect(() => resolveTrace('5g_walking_lumos5g_100', roots)).toThrow(/bandwidth trace "5g_walking_lumos5g_100" not found \(tried .*nonexistent-shared\/network\/5g_walking_lumos5g_100.csv/);
    expect(() => resolvePose('hhi_hololens/hololens_trace_01', roots)).toThrow(/pose trace/);
  });
});
