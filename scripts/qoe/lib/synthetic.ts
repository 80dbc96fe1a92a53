/**
 * The built-in inputs of the QoE runner: a synthetic bandwidth trace and a synthetic head-pose
 * trace, so a clean clone can run `--smoke` without the evaluation data beside the checkout. Both
 * are made by the deterministic functions below (no randomness, no copied data) and committed as
 * scripts/qoe/traces/*.csv; a unit test checks the files still equal the functions' output.
 *
 *   npx tsx scripts/qoe/lib/synthetic.ts      # writes both files again after a change here
 */
import { writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const TRACES_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '../traces');

/** The names `--traces` and `--poses` accept for the built-in files, and where those are. */
export const SYNTHETIC_BANDWIDTH = { name: 'synthetic', file: join(TRACES_DIR, 'synthetic_bandwidth.csv') } as const;
export const SYNTHETIC_POSE = { name: 'synthetic', file: join(TRACES_DIR, 'synthetic_pose.csv') } as const;

/** Seconds of bandwidth trace: a 120-s run plus the browser's start-up, with room to spare. */
export const SYNTHETIC_BANDWIDTH_S = 150;

/**
 * Downlink rate (Mbit/s) at second t, shaped like the 5G traces the matrix uses but made up: a
 * 100 Mbit/s median with a slow 60-s swell (±35), a faster 7-s wobble (±15) standing in for
 * fading, and three troughs where the rate falls to a fifth to a third for 3–5 s (a handover, a
 * building) — the events that make a player freeze or switch. The runner's `--trace-scale auto`
 * maps the median onto the content's ladder, so only the shape matters.
 */
export function syntheticMbps(t: number): number {
  const swell = 35 * Math.sin((2 * Math.PI * t) / 60);
  const wobble = 15 * Math.sin((2 * Math.PI * t) / 7 + 1);
  const troughs: Array<[from: number, to: number, factor: number]> = [[14, 17, 0.35], [52, 57, 0.2], [101, 105, 0.3]];
  const factor = troughs.find(([from, to]) => t >= from && t < to)?.[2] ?? 1;
  return Math.max(1, (100 + swell + wobble) * factor);
}

/** The bandwidth trace as `t_seconds,mbps`, one line per second. */
export function syntheticBandwidthCsv(seconds = SYNTHETIC_BANDWIDTH_S): string {
  const lines = ['t_seconds,mbps'];
  for (let t = 0; t < seconds; t++) lines.push(`${t},${syntheticMbps(t).toFixed(2)}`);
  return lines.join('\n') + '\n';
}

/** Span of the pose trace (s): the player loops it, and every motion below repeats a whole number of times in it. */
export const SYNTHETIC_POSE_S = 60;
/** Samples per second of the pose trace. */
export const SYNTHETIC_POSE_HZ = 20;

/**
 * A viewer standing among the demo scene's figures (placed around the origin) at eye height
 * 1.6 m, in Unity's left-handed frame like the recorded traces (the runner plays every pose
 * trace with `poseConvention=unity`): the head turns once around in 60 s so each figure passes
 * through view, glances ±20° every 7.5 s, nods ±6° every 12 s, and the body sways 15 cm in a
 * circle every 20 s with a 2-cm gait bob. Every period divides the 60-s span, so the looped
 * trace has no jump.
 * @returns position (m) and orientation quaternion (x, y, z, w) at time t (s)
 */
export function syntheticPose(t: number): { position: [number, number, number]; quaternion: [number, number, number, number] } {
  const phase = (period: number) => (2 * Math.PI * t) / period;
  const yaw = phase(SYNTHETIC_POSE_S) + 0.35 * Math.sin(phase(7.5));
  const pitch = 0.1 * Math.sin(phase(12));
  const position: [number, number, number] = [0.15 * Math.sin(phase(20)), 1.6 + 0.02 * Math.sin(phase(1.2)), 0.15 * Math.cos(phase(20)) - 0.15];
  // Yaw about +y, then pitch about the turned x axis: q = q_yaw · q_pitch.
  const [sy, cy, sp, cp] = [Math.sin(yaw / 2), Math.cos(yaw / 2), Math.sin(pitch / 2), Math.cos(pitch / 2)];
  const quaternion: [number, number, number, number] = [cy * sp, sy * cp, -sy * sp, cy * cp];
  return { position, quaternion };
}

/** The pose trace as `t_seconds,x,y,z,qx,qy,qz,qw` (the recorded traces' format). */
export function syntheticPoseCsv(seconds = SYNTHETIC_POSE_S, hz = SYNTHETIC_POSE_HZ): string {
  const lines = ['t_seconds,x,y,z,qx,qy,qz,qw'];
  for (let i = 0; i < seconds * hz; i++) {
    const t = i / hz;
    const { position, quaternion } = syntheticPose(t);
    lines.push([t.toFixed(3), ...position.map((v) => v.toFixed(4)), ...quaternion.map((v) => v.toFixed(6))].join(','));
  }
  return lines.join('\n') + '\n';
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  writeFileSync(SYNTHETIC_BANDWIDTH.file, syntheticBandwidthCsv());
  writeFileSync(SYNTHETIC_POSE.file, syntheticPoseCsv());
  console.log(`wrote ${SYNTHETIC_BANDWIDTH.file} and ${SYNTHETIC_POSE.file}`);
}
