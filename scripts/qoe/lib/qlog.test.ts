import { describe, expect, it } from 'vitest';
import { readQlogEvents, summarizeQlog } from './qlog';

const RS = '\u001e';
const header = { qlog_version: '0.4', trace: { common_fields: { reference_time: { clock_type: 'monotonic', wall_clock_time: '2026-11-29T09:30:50.500Z' } } } };
const ev = (time: number, name: string, data: object) => ({ time, name, data });
const sqlog = (...records: object[]) => records.map((r) => RS + JSON.stringify(r) + '\n').join('');

describe('qlog', () => {
  it('reads events with their wall-clock time and skips a record cut off at the end', () => {
    const text = sqlog(header, ev(1000, 'quic:packet_sent', { raw: { length: 1200 } })) + RS + '{"time": 1200, "name": "quic:pa';
    const events = readQlogEvents(text);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ name: 'quic:packet_sent', timeMs: 1000 });
    expect(events[0].wallMs).toBe(Date.parse('2026-11-29T09:30:50.500Z') + 1000);
  });

  it('summarises each interval: bytes sent, median rates (bytes/s in, Mbit/s out), window, RTT, losses', () => {
    const events = readQlogEvents(sqlog(header,
      ev(100, 'quic:packet_sent', { raw: { length: 1250 } }),
      ev(200, 'quic:packet_sent', { raw: { length: 1250 } }),
      ev(300, 'quic:recovery_metrics_updated', { cf_delivery_rate: 1_000_000, pacing_rate: 1_250_000, congestion_window: 60_000, smoothed_rtt: 100 }),
      ev(400, 'quic:recovery_metrics_updated', { cf_delivery_rate: 3_000_000, cf_lost_packets: { delta: 2 } }),
      ev(1500, 'quic:recovery_metrics_updated', { cf_lost_packets: { delta: 1 } }),
    ));
    const { intervals } = summarizeQlog(events, 1);
    expect(intervals.map((i) => i.fromS)).toEqual([0, 1]);
    expect(intervals[0].sentMbps).toBeCloseTo(0.02, 6);
    expect(intervals[0].deliveryRateMbps).toBe(16);
    expect(intervals[0].pacingRateMbps).toBe(10);
    expect(intervals[0].congestionWindowKB).toBe(60);
    expect(intervals[0].smoothedRttMs).toBe(100);
    expect(intervals[0].lostPackets).toBe(2);
    expect(intervals[1].lostPackets).toBe(1);
    expect(Number.isNaN(intervals[1].deliveryRateMbps)).toBe(true);
  });

  it('times each congestion state and its longest stay (an unfilled probe shows as a long PROBE_UP)', () => {
    const events = readQlogEvents(sqlog(header,
      ev(0, 'quic:congestion_state_updated', { new: 'bbr_startup' }),
      ev(2000, 'quic:congestion_state_updated', { new: 'bbr_probe_bw_up' }),
      ev(2500, 'quic:congestion_state_updated', { new: 'bbr_probe_bw_cruise' }),
      ev(4500, 'quic:congestion_state_updated', { new: 'bbr_probe_bw_up' }),
      ev(14000, 'quic:congestion_state_updated', { new: 'bbr_probe_bw_down' }),
      ev(15000, 'quic:packet_sent', { raw: { length: 100 } }),
    ));
    const up = summarizeQlog(events).states.find((s) => s.state === 'bbr_probe_bw_up')!;
    expect(up).toMatchObject({ entries: 2, longestFromS: 4.5 });
    expect(up.totalS).toBeCloseTo(10, 9);
    expect(up.longestS).toBeCloseTo(9.5, 9);
    expect(summarizeQlog(events).states[0].state).toBe('bbr_probe_bw_up');
    expect(summarizeQlog(events).states.find((s) => s.state === 'bbr_probe_bw_down')!.totalS).toBeCloseTo(1, 9);
  });

  it('refuses a bin that is not positive', () => {
    expect(() => summarizeQlog([], 0)).toThrow(/positive/);
  });
});
