/**
 * WebXR end to end: an emulated headset (npm `iwer`, the Immersive Web Emulation Runtime,
 * installed into the page before the app loads) enters an immersive-vr session on the demo app
 * playing the real demo scene. The head stands in the middle of the ring of figures and turns to
 * face one figure, then another; the player's object ranking (`getStats().objects[].rank`, decided
 * per segment from the predicted viewport) must follow the head; taking the headset off (the
 * session hidden) pauses playback until it is visible again.
 */
import { createRequire } from 'node:module';
import * as THREE from 'three';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, launch, until as waitUntil } from './lib/browser';
import { demoContentRoot } from './lib/content';
import { type Origin, spkiHash, startOrigin } from './lib/processes';

const IWER_BUNDLE = createRequire(import.meta.url).resolve('iwer/build/iwer.min.js');
const HEAD_HEIGHT_M = 1.6;

let origin: Origin;
let browser: Browser;

/** Polls until `probe` gives a value (fails after 60000 ms with the browser's last log lines). */
function until<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 60_000): Promise<T> {
  return waitUntil(browser, what, probe, timeoutMs);
}

interface ObjectBox {
  id: string;
  centre: [number, number, number];
}

/** The emulated head at `eye`, turned to look at `target` (camera looks along −Z, +Y up). */
async function lookAt(eye: THREE.Vector3, target: THREE.Vector3): Promise<void> {
  const m = new THREE.Matrix4().lookAt(eye, target, new THREE.Vector3(0, 1, 0));
  const q = new THREE.Quaternion().setFromRotationMatrix(m);
  await browser.page.evaluate(([p, r]) => {
    const device = (window as unknown as { xrDevice: { position: { set(x: number, y: number, z: number): void }; quaternion: { set(x: number, y: number, z: number, w: number): void } } }).xrDevice;
    device.position.set(p[0], p[1], p[2]);
    device.quaternion.set(r[0], r[1], r[2], r[3]);
  }, [eye.toArray(), q.toArray()] as const);
}

async function ranking(): Promise<string[]> {
  return browser.page.evaluate(() => {
    const stats = document.querySelector('holoquic-player')!.getStats()!;
    return [...stats.objects].sort((a, b) => a.rank - b.rank).map((o) => o.id);
  });
}

beforeAll(async () => {
  origin = await startOrigin(demoContentRoot());
  browser = await launch({ spki: await spkiHash('127.0.0.1', origin.quicPort) });
  await browser.page.setViewportSize({ width: 800, height: 450 });
  await browser.page.addInitScript({ path: IWER_BUNDLE });
  await browser.page.addInitScript(() => {
    const iwer = (globalThis as unknown as { IWER: { XRDevice: new (config: unknown) => { installRuntime(o?: unknown): void }; metaQuest3: unknown } }).IWER;
    const device = new iwer.XRDevice(iwer.metaQuest3);
    // Chromium has a native navigator.xr (with no device): replace it.
    device.installRuntime({ forceInstall: true });
    (window as unknown as { xrDevice: unknown }).xrDevice = device;
  });
  const query = new URLSearchParams({ origin: origin.httpsBase, manifest: '/content/demo/manifest.mpd', mode: 'qr', autoplay: '1' });
  await browser.page.goto(`${origin.httpBase}/?${query}`);
  await until('the player to draw', () => browser.page.evaluate(() => (document.querySelector('holoquic-player')?.getStats()?.render?.pointsDrawn ?? 0) > 0), 120_000);
});

afterAll(async () => {
  await browser?.close();
  await origin?.stop();
});

describe('an emulated headset', () => {
  let objects: ObjectBox[];

  it('enters immersive-vr and offers it as a button', async () => {
    const offered = await browser.page.evaluate(() => document.querySelector('holoquic-player')!.xrModes());
    expect(offered).toContain('immersive-vr');
    const buttons = await browser.page.evaluate(() => [...document.querySelector('holoquic-player')!.shadowRoot!.querySelectorAll('button')].map((b) => b.textContent));
    expect(buttons).toContain('Enter VR');
    await browser.page.evaluate(() => document.querySelector('holoquic-player')!.enterXR('immersive-vr'));
    await until('presenting', () => browser.page.evaluate(() => document.querySelector('holoquic-player')!.getStats()!.render!.presenting === 'immersive-vr'));
    objects = await browser.page.evaluate(() => document.querySelector('holoquic-player')!.player!.scene!.objects.map((o) => ({
      id: o.id,
      centre: [0, 1, 2].map((i) => (o.bbox.min[i] + o.bbox.max[i]) / 2) as [number, number, number],
    })));
    expect(objects.length).toBeGreaterThan(1);
  });

  it("publishes the headset's pose as the viewer pose every frame", async () => {
    const eye = new THREE.Vector3(0.3, HEAD_HEIGHT_M, 0.2);
    const target = new THREE.Vector3(...objects[1].centre);
    await lookAt(eye, target);
    const expected = new THREE.Quaternion().setFromRotationMatrix(new THREE.Matrix4().lookAt(eye, target, new THREE.Vector3(0, 1, 0)));
    const pose = await browser.page.evaluate(() => new Promise<{ position: number[]; orientation: number[] }>((resolve) => {
      const source = document.querySelector('holoquic-player')!.renderer!.poseSource;
      let frames = 0;
      const stop = source.start((p) => {
        // A few frames, so the pose set above has reached the session.
        if (++frames < 3) return;
        stop();
        resolve({ position: [...p.position], orientation: [...p.orientation] });
      });
    }));
    const got = new THREE.Quaternion(...(pose.orientation as [number, number, number, number]));
    expect(Math.abs(got.dot(expected))).toBeGreaterThan(0.9999);
    expect(pose.position[0]).toBeCloseTo(eye.x, 3);
    expect(pose.position[1]).toBeCloseTo(eye.y, 3);
    expect(pose.position[2]).toBeCloseTo(eye.z, 3);
  });

  it('ranks first the object the head turns to, and follows when it turns to another', async () => {
    const centre = objects.reduce((c, o) => c.add(new THREE.Vector3(...o.centre)), new THREE.Vector3()).divideScalar(objects.length);
    const eye = new THREE.Vector3(centre.x, HEAD_HEIGHT_M, centre.z);
    // Not the first object first: with no viewport model at all the MPD order would already rank it first.
    for (const target of [objects[1], objects[objects.length - 1], objects[0]]) {
      await lookAt(eye, new THREE.Vector3(...target.centre));
      // The ranking is decided when each segment is requested (once a second).
      const order = await until(`${target.id} ranked first`, async () => {
        const r = await ranking();
        return r[0] === target.id ? r : null;
      });
      expect(order[0]).toBe(target.id);
    }
  });
});

describe('taking the headset off', () => {
  it('pauses playback while the session is hidden and resumes when it is visible again', async () => {
    const setSessionVisibility = (state: 'hidden' | 'visible') => browser.page.evaluate((value) => {
      // The emulated device reports it to the session at its next frame, as a headset would.
      (window as unknown as { xrDevice: { updateVisibilityState(s: string): void } }).xrDevice.updateVisibilityState(value);
    }, state);
    const state = () => browser.page.evaluate(() => document.querySelector('holoquic-player')!.state);
    const played = () => browser.page.evaluate(() => document.querySelector('holoquic-player')!.getStats()!.playedS);
    expect(await state()).toBe('playing');
    await setSessionVisibility('hidden');
    await until('paused while the session is hidden', async () => (await state()) === 'paused');
    const hiddenAt = await played();
    await new Promise((r) => setTimeout(r, 1000));
    expect(await played()).toBeLessThanOrEqual(hiddenAt + 1e-9);
    await setSessionVisibility('visible');
    await until('playing once the session is visible', async () => (await state()) === 'playing');
    await until('the content clock to move again', async () => (await played()) > hiddenAt);
  });
});

describe('leaving VR', () => {
  it('returns to the screen camera, and immersive-ar starts the same way', async () => {
    await browser.page.evaluate(() => document.querySelector('holoquic-player')!.renderer!.exitXR());
    await until('not presenting', () => browser.page.evaluate(() => document.querySelector('holoquic-player')!.getStats()!.render!.presenting === null));
    const offered = await browser.page.evaluate(() => document.querySelector('holoquic-player')!.xrModes());
    expect(offered).toContain('immersive-ar'); // the emulated Quest 3 has passthrough AR
    await browser.page.evaluate(() => document.querySelector('holoquic-player')!.enterXR('immersive-ar'));
    await until('presenting AR', () => browser.page.evaluate(() => document.querySelector('holoquic-player')!.getStats()!.render!.presenting === 'immersive-ar'));
  });
});
