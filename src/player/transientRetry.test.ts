import { describe, expect, it } from 'vitest';
import type { ObjectRequest, ObjectResult, ObjectTransport } from '../transport/types';
import { playOn, ScriptedLink } from '../testing/scriptedLink';
import { VirtualClock } from './clock';
import { FixedModePolicy } from './policy';
import { knapsackRule } from './rules';

/**
 * The scripted link as HTTP/2 (`h2`), whose origin answers the first request of segment 4's
 * most visible object with `status` (a gateway in front of an object store, say) and every later
 * request normally.
 */
function http2Answering(clock: VirtualClock, status: number) {
  const link = new ScriptedLink(clock, () => 20e6);
  const asked: string[] = [];
  let failed = false;
  const http2: ObjectTransport = {
    kind: 'http2', state: 'connected', connect: async () => {}, onStateChange: () => () => {}, close: () => {},
    linkEstimate: () => link.linkEstimate(),
    fetchObject: async (req: ObjectRequest): Promise<ObjectResult> => {
      asked.push(req.path);
      if (!failed && req.path.startsWith('/content/test/o0/') && req.path.endsWith('seg-00004.v3c')) {
        failed = true;
        await clock.sleep(0.02);
        return { status, bytes: null, stats: { delivery: req.delivery, transport: 'http2', objectBytes: 0, receivedBytes: 0, requestedAt: clock.now() * 1000, recovered: false }, error: `HTTP ${status}` };
      }
      return link.fetchObject(req);
    },
  };
  return { link, http2, asked };
}

async function playH2(status: number) {
  const clock = new VirtualClock();
  const { link, http2, asked } = http2Answering(clock, status);
  const session = await playOn(clock, link, 8, {
    transports: { http2 }, policy: new FixedModePolicy('h2', knapsackRule),
  });
  const record = session.segmentRecords().find((r) => r.object === 'o0' && r.index === 4);
  return { asked: asked.filter((p) => p.startsWith('/content/test/o0/') && p.endsWith('seg-00004.v3c')), record };
}

describe('an HTTP/2 object the origin answered with a transient status', () => {
  it('is asked for again and shown on time (502, 504)', async () => {
    for (const status of [502, 504]) {
      const { asked, record } = await playH2(status);
      expect(asked.length, `HTTP ${status}`).toBe(2);
      expect(record?.recovered, `HTTP ${status}`).toBe(true);
      expect(record?.onTime, `HTTP ${status}`).toBe(true);
    }
  });

  it('is not asked for again after a permanent status (404): its last frame is held', async () => {
    const { asked, record } = await playH2(404);
    expect(asked.length).toBe(1);
    expect(record?.recovered).toBe(false);
  });
});
