/**
 * WebXR entry: which immersive modes this browser offers, and starting one on a three.js renderer
 * (its WebXRManager then drives the animation loop at the headset's rate and renders each eye).
 */
import type * as THREE from 'three';

export type XRMode = 'immersive-vr' | 'immersive-ar';

export const XR_MODES: readonly XRMode[] = ['immersive-vr', 'immersive-ar'];

/** The immersive modes the browser says it supports (none without WebXR or outside a secure context). */
export async function supportedXRModes(): Promise<XRMode[]> {
  const xr = globalThis.navigator?.xr;
  if (!xr) return [];
  const supported: XRMode[] = [];
  for (const mode of XR_MODES) {
    try {
      if (await xr.isSessionSupported(mode)) supported.push(mode);
    } catch {
      // A browser policy can refuse the question; that mode is simply not offered.
    }
  }
  return supported;
}

/**
 * Requests an immersive session and hands it to `renderer`. Resolves with the session once
 * presenting; the caller learns of its end from the session's `end` event.
 */
export async function startXRSession(renderer: THREE.WebGLRenderer, mode: XRMode): Promise<XRSession> {
  const xr = globalThis.navigator?.xr;
  if (!xr) throw new Error('WebXR is not available in this browser');
  // local-floor puts the scene's y = 0 on the real floor, where the packager stands the figures.
  const session = await xr.requestSession(mode, { optionalFeatures: ['local-floor'] });
  renderer.xr.setReferenceSpaceType('local-floor');
  try {
    await renderer.xr.setSession(session);
  } catch {
    // Runtimes without local-floor: fall back to a head-relative origin.
    renderer.xr.setReferenceSpaceType('local');
    await renderer.xr.setSession(session);
  }
  return session;
}
