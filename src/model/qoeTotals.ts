/**
 * Running totals of a run's QoE records: the sums and counts the summary's ratios and means are
 * made of (src/qoe/schema.ts → `summarizeQoe`), kept record by record in memory that does not
 * grow with the run. The player keeps them over every record it writes, while it keeps only
 * the most recent records themselves (`QOE_SEGMENTS_KEPT`), so a long run's summary stays exact
 * (docs/qoe.md → "QoE log"). One definition: the summary of any log is computed through them.
 */
import type { QoeSegment, QoeTotals } from './qoe';

export function emptyQoeTotals(): QoeTotals {
  return {
    records: 0, outcomes: 0, requested: 0, onTime: 0, shown: 0, shownQualitySum: 0, shownBitrateSum: 0, shownAreaSum: 0,
    shownAreaQualitySum: 0, shownSeenAreaSum: 0, shownSeenAreaQualitySum: 0, outcomeAreaSum: 0, onTimeAreaSum: 0, delivered: 0, deliveredDecoded: 0, datagram: 0,
    datagramRecovered: 0, datagramDelivered: 0, datagramDeliveredDecoded: 0, sourceSymbols: 0, symbolsSent: 0,
    repairRequests: 0, bytesReceived: 0, bytesWasted: 0, volatileFromS: null, rankShown: [], rankQualitySum: [],
    qualitySwitches: 0, lastShown: {},
  };
}

/**
 * Adds one record. `baseBufferS` is the run's buffer target on a steady link (`volatileFromS`
 * counts requests made above it). A shown record of an earlier segment than the last one shown
 * of its object (its decode finished late) counts everywhere but in `qualitySwitches`, which
 * compares each shown segment with the one before it.
 */
export function addQoeRecord(t: QoeTotals, s: QoeSegment, baseBufferS: number): void {
  t.records++;
  t.repairRequests += s.repairRequests ?? 0;
  t.bytesReceived += s.receivedBytes;
  const shown = s.onTime || !!s.shownLate;
  t.bytesWasted += shown ? Math.max(0, s.receivedBytes - s.objectBytes) : s.receivedBytes;
  if ((s.bufferTargetS ?? 0) > baseBufferS) t.volatileFromS = Math.min(t.volatileFromS ?? Infinity, s.requestedAtS);
  // One outcome per object-segment: a given-up request is none, and of a late upgrade and the
  // lower rung under it, the one shown (the lower rung when the upgrade was not).
  if (s.abandoned || s.superseded || (s.upgrade && !shown)) return;
  t.outcomes++;
  t.outcomeAreaSum += s.visibleArea;
  if (s.onTime) t.onTimeAreaSum += s.visibleArea;
  if (s.delivery === 'skip') return;
  t.requested++;
  if (s.onTime) t.onTime++;
  const delivered = s.recovered && !s.decodeLate;
  if (delivered) {
    t.delivered++;
    if (s.decoded) t.deliveredDecoded++;
  }
  if (s.delivery === 'datagram') {
    t.datagram++;
    if (s.recovered) t.datagramRecovered++;
    if (delivered) {
      t.datagramDelivered++;
      if (s.decoded) t.datagramDeliveredDecoded++;
    }
    if ((s.sourceSymbols ?? 0) > 0 && s.symbolsSent !== undefined) {
      t.sourceSymbols += s.sourceSymbols ?? 0;
      t.symbolsSent += s.symbolsSent;
    }
  }
  if (shown) addShown(t, s);
}

function addShown(t: QoeTotals, s: QoeSegment): void {
  t.shown++;
  t.shownQualitySum += s.quality;
  t.shownBitrateSum += s.bitrateBps;
  t.shownAreaSum += s.visibleArea;
  t.shownAreaQualitySum += s.quality * s.visibleArea;
  if (s.seenArea !== undefined) {
    t.shownSeenAreaSum = (t.shownSeenAreaSum ?? 0) + s.seenArea;
    t.shownSeenAreaQualitySum = (t.shownSeenAreaQualitySum ?? 0) + s.quality * s.seenArea;
  }
  for (let r = t.rankShown.length; r <= s.rank; r++) {
    t.rankShown.push(0);
    t.rankQualitySum.push(0);
  }
  t.rankShown[s.rank]++;
  t.rankQualitySum[s.rank] += s.quality;
  const last = t.lastShown[s.object];
  if (last && s.index <= last.index) return;
  if (last && last.quality !== s.quality) t.qualitySwitches++;
  t.lastShown[s.object] = { index: s.index, quality: s.quality };
}

/**
 * The totals of a whole list of records (a log that kept all of them), in segment order as a
 * run shows them, so that every shown segment is compared with the one before it.
 */
export function qoeTotalsOf(records: readonly QoeSegment[], baseBufferS: number): QoeTotals {
  const t = emptyQoeTotals();
  const ordered = records.map((s, i) => ({ s, i })).sort((a, b) => a.s.index - b.s.index || a.i - b.i);
  for (const { s } of ordered) addQoeRecord(t, s, baseBufferS);
  return t;
}
