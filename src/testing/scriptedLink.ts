/**
 * A scripted network for the playout loop's unit tests and simulations (scripts/bench/abandon.ts):
 * a scene whose objects have a fixed bitrate ladder, and a link that serves requests as the origin
 * does. Not the real transports: those are tested end to end in e2e/.
 */
import type { LinkMeasurement, ObjectRequest, ObjectResult, ObjectTransport } from '../transport/types';
import type { VirtualClock } from '../player/clock';
import type { SegmentDecoder } from '../model/decoder';
import type { SceneModel } from '../model/scene';
import { type PlayoutConfig, PlayoutSession } from '../player/playout';
import { FixedModePolicy } from '../player/policy';
import { knapsackRule } from '../player/rules';

/** Bits/s of qualities 0 … 4. */
export const LADDER = [1e6, 2e6, 4e6, 8e6, 16e6];

export function scene(objects = 2): SceneModel {
  return {
    scene: 'test', segmentDuration: 1, passDuration: 10,
    objects: Array.from({ length: objects }, (_, i) => ({
      id: `o${i}`, codecs: 'v3c', position: [i, 0, 0], rotation: [0, 0, 0, 1], scale: 0.001,
      bbox: { min: [0, 0, 0], max: [1, 1, 1] }, loopSegments: 10, playMode: 'loop' as const, startNumber: 0,
      mediaTemplate: `o${i}/$RepresentationID$/seg-$Number%05d$.v3c`,
      representations: LADDER.map((b, q) => ({ id: String(q), rank: q, bandwidth: b, avgBandwidth: b, pointsPerFrame: 1000 })),
    })),
  };
}

/**
 * A link of `rateBps(t)` serving the transfers in flight as the origin does (docs/protocol.md
 * §3.2): most urgent first, equal urgencies in request order, in 10 ms steps on the virtual clock;
 * objects are `bitrate × 1 s` bytes. A scripted stand-in for the network in unit tests of the
 * loop's decisions (the real transports are tested end to end in e2e/).
 */
export class ScriptedLink implements ObjectTransport {
  readonly kind = 'webtransport' as const;
  state: ObjectTransport['state'] = 'connected';
  readonly requests: ObjectRequest[] = [];
  private active: Array<{ left: number; total: number; req: ObjectRequest; done: (r: ObjectResult) => void; startMs: number }> = [];
  private running = false;

  /**
   * `objectBytes` sizes an object from its request path (default: `LADDER[quality] / 8`, the
   * quality read from the path, for `scene()`'s objects).
   */
  constructor(
    private readonly clock: VirtualClock, private readonly rateBps: (t: number) => number,
    private readonly objectBytes: (path: string) => number = (path) => LADDER[Number(/\/(\d)\/seg/.exec(path)![1])] / 8,
  ) {}

  /**
   * The session is lost from `from` to `to` (seconds): transfers in flight fail without a status,
   * requests made meanwhile fail at once, and the state reads `reconnecting` until it is back.
   */
  loseSession(from: number, to: number): void {
    void this.clock.sleep(from).then(() => {
      this.state = 'reconnecting';
      for (const e of this.active) e.done({ status: 0, bytes: null, stats: { delivery: e.req.delivery, transport: 'webtransport', objectBytes: e.total, receivedBytes: 0, requestedAt: e.startMs, recovered: false }, error: 'session lost' });
      this.active = [];
      return this.clock.sleep(to - from);
    }).then(() => {
      this.state = 'connected';
    });
  }

  connect(): Promise<void> { return Promise.resolve(); }
  onStateChange(): () => void { return () => {}; }
  close(): void { this.running = false; }
  /** No loss is scripted; every response's first byte comes 20 ms after its request. */
  linkEstimate(): LinkMeasurement { return { loss: { rate: 0, meanBurst: 1 }, rttS: 0.02 }; }

  fetchObject(req: ObjectRequest): Promise<ObjectResult> {
    this.requests.push(req);
    if (this.state !== 'connected') {
      return Promise.resolve({ status: 0, bytes: null, stats: { delivery: req.delivery, transport: 'webtransport', objectBytes: 0, receivedBytes: 0, requestedAt: this.clock.now() * 1000, recovered: false }, error: 'no session' });
    }
    const total = this.objectBytes(req.path);
    const result = new Promise<ObjectResult>((done) => {
      const entry = { left: total, total, req, done, startMs: this.clock.now() * 1000 };
      this.active.push(entry);
      req.signal?.addEventListener('abort', () => {
        this.active = this.active.filter((e) => e !== entry);
        done({ status: 0, bytes: null, stats: { delivery: req.delivery, transport: 'webtransport', objectBytes: total, receivedBytes: total - entry.left, requestedAt: entry.startMs, recovered: false } });
      });
    });
    if (!this.running) void this.pump();
    return result;
  }

  private async pump(): Promise<void> {
    this.running = true;
    while (this.running && this.active.length > 0) {
      await this.clock.sleep(0.01);
      let budget = (this.rateBps(this.clock.now()) * 0.01) / 8;
      const order = [...this.active].sort((a, b) => (a.req.urgency ?? 3) - (b.req.urgency ?? 3));
      for (const e of order) {
        if (budget <= 0) break;
        const sent = Math.min(budget, e.left);
        budget -= sent;
        e.left -= sent;
        e.req.onProgress?.(Math.min(e.total, e.total - e.left), e.total);
        if (e.left <= 0) {
          this.active = this.active.filter((x) => x !== e);
          const now = this.clock.now() * 1000;
          // A datagram object decodes from K + 2 of K + 10 symbols sent; the last 8 were still in
          // flight (not lost): the link loses nothing.
          const symbols = e.req.delivery === 'datagram'
            ? { symbolsSent: 110, symbolsReceived: 102, symbolsObserved: 102, symbolsLost: 0, lossBursts: 0, sourceSymbols: 100 }
            : {};
          e.done({ status: 200, bytes: new Uint8Array(8), stats: { delivery: e.req.delivery, transport: 'webtransport', objectBytes: e.total, receivedBytes: e.total, requestedAt: e.startMs, firstByteAt: e.startMs + 20, lastByteAt: now, recovered: true, ...symbols } });
        }
      }
    }
    this.running = false;
  }
}

/** A decoder that takes no time (5 ms reported). */
export const decoder: SegmentDecoder = { decode: async () => ({ frames: [], decodeMs: 5 }) };
/** `o0` in view, the others mostly not. */
export const viewport = { visibleArea: (id: string) => (id === 'o0' ? 0.5 : 0.1) };

/**
 * Plays `durationS` (default mode `qr`, 2 objects) on a virtual clock over `link`, then stops the
 * session. `beforeRun` sees the session first (to schedule seeks, pauses, …).
 */
export async function playOn(
  clock: VirtualClock, link: ScriptedLink, durationS: number, options: Partial<PlayoutConfig> = {},
  beforeRun?: (session: PlayoutSession) => void,
): Promise<PlayoutSession> {
  const session = new PlayoutSession({
    scene: scene(2), contentBase: '/content/test/', transports: { webtransport: link, http2: link }, decoder, viewport,
    policy: new FixedModePolicy('qr', knapsackRule), clock, durationS, ...options,
  });
  beforeRun?.(session);
  const done = session.run();
  await clock.run(durationS + 1);
  session.close();
  await clock.run();
  await done;
  return session;
}
