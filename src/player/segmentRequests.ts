/**
 * The requests of the segments in flight, by segment: the object tasks the playout loop started
 * (objectTask.ts), their replacements after abandonment, late upgrades (lateUpgrade.ts: never
 * waited for, so left out of what playback and readiness wait on), and what their state says — how much is
 * ready ahead, what the link still owes, what a seek or the end of playback cancels. The loop
 * decides when; this table only keeps and answers.
 */
import type { ObjectTransport } from '../transport/types';
import { inFlight, type ObjectTask, owedBytes, owesLink, startObjectTask, type TaskEnv } from './objectTask';
import type { PlannedRequest } from './plan';
import { holdsPlayback } from './policy';

export class SegmentRequests {
  private readonly bySegment = new Map<number, ObjectTask[]>();
  /** Segments whose deliveries have given the throughput estimate their sample (segmentShow.ts → `sampleSegment`). */
  private readonly sampled = new Set<number>();
  /** Order of creation over every task: equal urgencies are served in request order. */
  private sequence = 0;

  constructor(
    private readonly env: TaskEnv,
    private readonly transports: { webtransport?: ObjectTransport; http2: ObjectTransport },
  ) {}

  /** Segment k was requested, or holds its place to be (`reserve`). */
  has(k: number): boolean {
    return this.bySegment.has(k);
  }

  /** Holds segment k's place until its requests start (segmentTurn.ts); a seek drops it. */
  reserve(k: number): void {
    if (!this.bySegment.has(k)) this.bySegment.set(k, []);
  }

  /** Segment k holds its place and has no requests yet. */
  isReserved(k: number): boolean {
    return this.bySegment.get(k)?.length === 0;
  }

  /** Some segment before k still owes bytes, or waits for its turn to be requested. */
  owedBefore(k: number): boolean {
    return [...this.bySegment.entries()].some(([j, list]) => j < k && (list.length === 0 || list.some((t) => !t.upgrade && inFlight(t))));
  }

  /** Segment k's tasks (replacements included), empty when none. */
  of(k: number): readonly ObjectTask[] {
    return this.bySegment.get(k) ?? [];
  }

  /** Starts the planned requests of segment `k`, due at `deadline`; returns their tasks. */
  start(k: number, requests: readonly PlannedRequest[], deadline: number, bufferTargetS: number): ObjectTask[] {
    const { webtransport, http2 } = this.transports;
    const list = requests.map((r) => {
      const transport = r.transport === 'webtransport' && webtransport ? webtransport : http2;
      return startObjectTask(this.env, r, transport, k, deadline, bufferTargetS, this.sequence++);
    });
    this.bySegment.set(k, list);
    return list;
  }

  /** Segments whose requests have started, in order. */
  segments(): number[] {
    return [...this.bySegment.entries()].filter(([, list]) => list.length > 0).map(([k]) => k).sort((a, b) => a - b);
  }

  /** Starts late upgrades of segment `k` beside its requests (lateUpgrade.ts); returns their tasks. */
  addUpgrades(k: number, requests: readonly PlannedRequest[], bufferTargetS: number): ObjectTask[] {
    const list = this.bySegment.get(k);
    const first = list?.[0];
    if (!list || !first || !this.transports.webtransport) return [];
    const added = requests.map((r) => startObjectTask(this.env, { ...r, upgrade: true }, this.transports.webtransport!, k, first.deadline, bufferTargetS, this.sequence++));
    list.push(...added);
    return added;
  }

  /** Gives a late upgrade up: its lowest rung, already requested, plays instead. */
  giveUpUpgrade(task: ObjectTask): void {
    task.abandoned = true;
    task.abort.abort();
  }

  /** Gives `task` up for good: the segment plays without a new frame of its object (abandon.ts → `replacedWhenGivenUp`). */
  drop(task: ObjectTask): void {
    task.abandoned = true;
    task.dropped = true;
    task.abort.abort();
  }

  /** Gives `task` up and asks for its object again at the lowest quality, most urgently, on the same transport. */
  replace(task: ObjectTask, bufferTargetS: number): void {
    task.abandoned = true;
    task.abort.abort();
    const replacement = startObjectTask(this.env, {
      object: task.object, plan: { ...task.plan, quality: 0, urgency: 0 }, transport: task.transport.kind,
      visibleArea: task.visibleArea, rank: task.rank,
    }, task.transport, task.index, task.deadline, bufferTargetS, this.sequence++);
    this.bySegment.get(task.index)?.push(replacement);
  }

  /** Segment k was shown: its tasks leave the table (their records are written as they settle). */
  delete(k: number): void {
    this.bySegment.delete(k);
    this.sampled.delete(k);
  }

  /** Every request of segment k has started and none is owed bytes any more: its transfers are over. */
  transfersOver(k: number): boolean {
    const list = this.bySegment.get(k);
    return !!list && list.length > 0 && list.every((t) => !inFlight(t));
  }

  /** Claims segment k's one throughput sample: true the first time, false once it was taken. */
  claimSample(k: number): boolean {
    if (this.sampled.has(k)) return false;
    this.sampled.add(k);
    return true;
  }

  /** Consecutive segments from `k` on whose objects are all settled (arrived and decoded, or given up). */
  readyFrom(k: number): number {
    let ready = 0;
    for (let j = k; ; j++) {
      const list = this.bySegment.get(j);
      if (!list || list.length === 0 || !list.every((t) => t.settled || t.upgrade)) return ready;
      ready++;
    }
  }

  /** Some request is owed bytes of its transfer by the link (objectTask.ts → `owesLink`; decoding is not the link's time). */
  linkBusy(): boolean {
    return [...this.bySegment.values()].some((list) => list.some((t) => owesLink(t)));
  }

  /** Bytes every request in flight still owes, late upgrades included: what the link has yet to carry. */
  owedBytes(): number {
    let bytes = 0;
    for (const list of this.bySegment.values()) for (const t of list) if (inFlight(t)) bytes += owedBytes(t, this.env.segmentDurationS);
    return bytes;
  }

  /** A segment before `k` is still arriving (its requests are "behind", plan.ts → `requestUrgency`). */
  behind(k: number): boolean {
    return [...this.bySegment.entries()].some(([j, list]) => j < k && list.some((t) => !t.settled && !t.abandoned));
  }

  /**
   * Reliable requests playback would wait for still owing bytes (late upgrades included), in the
   * order the origin serves them (urgency, then request order).
   */
  owedReliable(): ObjectTask[] {
    return [...this.bySegment.values()].flat()
      .filter((t) => holdsPlayback(t.plan) && inFlight(t))
      .sort((a, b) => (a.plan.urgency - b.plan.urgency) || (a.sequence - b.sequence));
  }

  /** Segment k's reliable objects playback still waits for. */
  awaited(k: number): ObjectTask[] {
    return this.of(k).filter((t) => holdsPlayback(t.plan) && !t.upgrade && !t.abandoned && !t.settled);
  }

  /**
   * Cancels what a position whose first segment is `k` will not play: requests and decodes of
   * every other segment, except the `ahead` segments after it already decoded (they play next,
   * unchanged). The target's own requests go on: nothing is more urgent.
   */
  keepOnly(k: number, ahead: number): void {
    for (const [j, list] of this.bySegment) {
      // A place held for requests not made yet is dropped: the new position asks for its own.
      if (list.length > 0 && (j === k || (j > k && j <= k + ahead && list.every((t) => t.settled || t.upgrade)))) continue;
      for (const t of list) {
        t.abort.abort();
        t.decodeWithdraw.abort();
      }
      this.bySegment.delete(j);
      this.sampled.delete(j);
    }
  }

  /** Stops every request (playback is over); `unsettledOnly` leaves settled ones alone. */
  abortAll(unsettledOnly = false): void {
    for (const list of this.bySegment.values()) for (const t of list) if (!unsettledOnly || !t.settled) t.abort.abort();
  }

  clear(): void {
    this.bySegment.clear();
    this.sampled.clear();
  }
}
