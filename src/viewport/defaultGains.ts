import type { HorizonGain } from './horizonGains';

/** Horizons (ms) at which the default predictor's gains are fitted; interpolated in between. */
export const GAIN_HORIZONS_MS = [50, 100, 200, 300, 500, 700, 1000, 1500, 2000];

/**
 * Gains of the default {@link HorizonGainPredictor} (constant-velocity Kalman filter with default
 * noise), fitted on all 91 traces of ../shared/data/pose (HHI HoloLens + CWI 8i) by
 * `npx tsx scripts/viewport/evaluate.ts --fit`. Rerun and paste after changing the filter.
 * Over a second heads keep about 70 % of their horizontal velocity but little vertical motion
 * (walking bobs), a third of their yaw rate but a tenth of their pitch/roll rate, and a tilted
 * gaze comes back toward level.
 */
export const DEFAULT_HORIZON_GAINS: readonly HorizonGain[] = [
  { horizonMs: 50, position: { horizontal: 0.9836, vertical: 0.8356 }, orientation: { yaw: 0.9411, tilt: 0.7530, level: 0.0009 } },
  { horizonMs: 100, position: { horizontal: 0.9720, vertical: 0.7095 }, orientation: { yaw: 0.8913, tilt: 0.6344, level: 0.0021 } },
  { horizonMs: 200, position: { horizontal: 0.9433, vertical: 0.4911 }, orientation: { yaw: 0.7898, tilt: 0.4732, level: 0.0062 } },
  { horizonMs: 300, position: { horizontal: 0.9110, vertical: 0.3730 }, orientation: { yaw: 0.7067, tilt: 0.3842, level: 0.0121 } },
  { horizonMs: 500, position: { horizontal: 0.8452, vertical: 0.2770 }, orientation: { yaw: 0.5728, tilt: 0.2581, level: 0.0282 } },
  { horizonMs: 700, position: { horizontal: 0.7849, vertical: 0.2077 }, orientation: { yaw: 0.4697, tilt: 0.1767, level: 0.0503 } },
  { horizonMs: 1000, position: { horizontal: 0.6997, vertical: 0.1662 }, orientation: { yaw: 0.3589, tilt: 0.1017, level: 0.0908 } },
  { horizonMs: 1500, position: { horizontal: 0.5836, vertical: 0.1015 }, orientation: { yaw: 0.2631, tilt: 0.0392, level: 0.1546 } },
  { horizonMs: 2000, position: { horizontal: 0.5079, vertical: 0.0571 }, orientation: { yaw: 0.2175, tilt: 0.0165, level: 0.1979 } },
];
