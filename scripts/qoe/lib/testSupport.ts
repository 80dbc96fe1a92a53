/**
 * Run records for the QoE tooling's unit tests: a small QoE log of chosen freezes and quality,
 * and a run record around it, as the runner would write them.
 */
import { QOE_SCHEMA, type QoeLog, type QoeSegment } from '../../../src/model/qoe';
import type { RunRecord } from './aggregate';

/** A 3-segment log showing `quality` on time (so visible quality = quality), with a freeze per entry of `freezeS`. */
export function qoe(freezeS: number[], quality: number): QoeLog {
  const segments: QoeSegment[] = [0, 1, 2].map((index) => ({
    object: 'o0', index, quality, qualityCount: 5, bitrateBps: 1e6, delivery: 'datagram', fec: 'planned',
    transport: 'webtransport', visibleArea: 0.3, rank: 0, requestedAtS: index, deadlineS: index + 1,
    completedAtS: index + 0.5, objectBytes: 125_000, receivedBytes: 130_000, sourceSymbols: 100, symbolsSent: 110,
    recovered: true, abandoned: false, decoded: true, onTime: true,
  }));
  return {
    schema: QOE_SCHEMA,
    config: { mode: 'qpr-fec', abr: 'knapsack', bufferTargetS: 1, manifest: 'm', transport: 'webtransport', predictor: 'p', segmentDurationS: 1 },
    startedAt: '2026-11-23T00:00:00Z', userAgent: 'test', playback: { startupS: 0.3, playedS: 3, wallS: 4 },
    freezes: freezeS.map((d, i) => ({ atS: i, durationS: d, cause: 'underrun' as const })), segments,
  };
}

export function record(id: string, mode: string, lossPct: number, rep: number, log: QoeLog | null): RunRecord {
  return {
    run: { id, mode, lossPct, ge: '', trace: 't', traceScale: 0.1, pose: 'p', repetition: rep, durationS: 3, delayMs: 10 },
    qoe: log, error: log ? undefined : 'page never reached playing',
    impairer: { toClient: { seen: 1000, dropped_loss: lossPct * 10 } },
  };
}
