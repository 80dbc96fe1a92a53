/**
 * Issuing a segment's requests for the playout loop (playout.ts): planning them (plan.ts) with
 * what the session knows now, on the transport the current mode's requests travel on, and when —
 * the buffer target's horizon at once (or in turn over HTTP/2, segmentTurn.ts), and the one
 * segment past it that pipelineAhead.ts may ask for early. It owns the delivery policy in force,
 * since the carrier follows the policy's mode.
 */
import type { LinkEstimates } from '../link/estimates';
import { carriesRequests, type ObjectTransport } from '../transport/types';
import type { ContentClock } from './contentClock';
import type { DecodeCostModel } from './decodeBudget';
import type { PassTimeline } from './pass';
import { type PlanContext, planSegment, transportKind } from './plan';
import type { PlayoutConfig } from './playoutConfig';
import type { DeliveryPolicy } from './policy';
import type { SegmentRequests } from './segmentRequests';
import { requestInTurn } from './segmentTurn';

/** What the issuer reads of the playout session. */
export interface IssuerEnv {
  cfg: PlayoutConfig;
  tasks: SegmentRequests;
  link: LinkEstimates;
  content: ContentClock;
  timeline: PassTimeline;
  decodeCost: DecodeCostModel;
  /** Each object's quality last shown (planning's `previousQuality`). */
  lastQuality: ReadonlyMap<string, number>;
  /** Playback stopped (close()): no request waits in turn past it. */
  stopped: AbortSignal;
  /** Seconds of content ready ahead of the playhead, and the buffer target now. */
  bufferedS(): number;
  bufferTargetS(): number;
  /** The link starved recently, so the buffer target is raised (`BufferTarget.volatileAt`). */
  linkVolatile(): boolean;
  /** The WebTransport session is being replaced. */
  sessionDown(): boolean;
}

export class SegmentIssuer {
  /** The delivery policy (mode) segments are planned with, from the next one requested. */
  policy: DeliveryPolicy;
  /** The segment whose buffer-target horizon has been requested (the loop's current one); null while none is. */
  horizonFrom: number | null = null;

  constructor(private readonly env: IssuerEnv) {
    this.policy = env.cfg.policy;
  }

  /** Segments the buffer target reaches ahead of the one playing (at least one). */
  get aheadSegments(): number {
    return Math.max(1, Math.ceil(this.env.bufferTargetS() / this.env.cfg.scene.segmentDuration));
  }

  /** The transport the current mode's requests travel on (plan.ts → `transportKind`). */
  carrier(): ObjectTransport {
    const { webtransport, http2 } = this.env.cfg.transports;
    return transportKind(this.policy.mode, this.webTransportUsable()) === 'webtransport' ? webtransport! : http2;
  }

  /** A WebTransport session carries requests now (it may have fallen back to HTTP/2: transport/types.ts). */
  webTransportUsable(): boolean {
    const { webtransport } = this.env.cfg.transports;
    return webtransport !== undefined && carriesRequests(webtransport.state);
  }

  /** Plans and issues the requests of segment `k`, due at `deadline` (session clock). */
  request(k: number, deadline: number): void {
    const requests = planSegment(this.planContext(k, deadline));
    const list = this.env.tasks.start(k, requests, deadline, this.env.bufferTargetS());
    this.env.cfg.onPlan?.(list.map((t) => ({
      segment: k, objectId: t.object.id, quality: t.plan.quality, delivery: t.plan.delivery, rank: t.rank, visibleArea: t.visibleArea,
    })));
  }

  /**
   * Requests segment j ahead of the playhead: at once, or over HTTP/2 once the segments before it
   * have arrived (segmentTurn.ts).
   */
  requestAhead(j: number): void {
    const { cfg, content, tasks, stopped } = this.env;
    if (this.carrier().kind !== 'http2') return this.request(j, content.playoutTime(j));
    void requestInTurn({
      clock: cfg.clock, tasks, segmentDurationS: cfg.scene.segmentDuration,
      playoutTime: (i) => content.playoutTime(i), request: (i, deadline) => this.request(i, deadline),
    }, j, stopped);
  }

  /**
   * The segment one past the buffer target's horizon when pipelineAhead.ts may ask for it now:
   * playing (not paused, no seek under way), over a WebTransport session that is up, in the pass being played (or
   * looping) and published, and not asked for yet.
   */
  pipelinedSegment(): number | null {
    const k = this.horizonFrom;
    const { content, timeline, tasks } = this.env;
    if (k === null || content.paused || timeline.seekTarget !== null || this.env.sessionDown() || this.carrier().kind === 'http2') return null;
    const j = k + this.aheadSegments + 1;
    if (tasks.has(j) || (!timeline.loop && !timeline.samePass(j, k)) || (timeline.grows && j >= timeline.segments)) return null;
    return j;
  }

  /** What planning segment `k`, due at `deadline` (session clock), reads now. */
  planContext(k: number, deadline: number): PlanContext {
    const { cfg, link, tasks, decodeCost } = this.env;
    const { scene, viewport, clock, decoder } = cfg;
    return {
      scene, viewport, policy: this.policy, segment: k, deadlineS: deadline, nowS: clock.now(),
      link: link.snapshot(this.carrier()), bufferS: this.env.bufferedS(), bufferTargetS: this.env.bufferTargetS(), linkVolatile: this.env.linkVolatile(),
      previousQuality: this.env.lastQuality,
      behind: tasks.behind(k),
      decodeParallelism: decoder.parallelism ?? 1, decodeCost, maxQuality: cfg.maxQuality?.() ?? null,
      hasWebTransport: this.webTransportUsable(), lateUpgrades: cfg.lateUpgrades,
    };
  }
}
