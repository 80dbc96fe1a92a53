import * as THREE from 'three';
import { describe, expect, it } from 'vitest';
import type { Pose } from '../model/pose';
import { CameraPoseSource } from './cameraPoseSource';
import { RateMeter } from './rateMeter';

describe('CameraPoseSource', () => {
  it("emits the camera's world pose to every subscriber until stopped, a fresh object each time", () => {
    const source = new CameraPoseSource();
    const got: Pose[] = [];
    const stop = source.start((p) => got.push(p));
    const rig = new THREE.Group();
    rig.position.set(0, 1, 0);
    const camera = new THREE.PerspectiveCamera();
    rig.add(camera);
    camera.position.set(1, 0.6, 2);
    camera.quaternion.setFromAxisAngle(new THREE.Vector3(0, 1, 0), Math.PI / 2);
    rig.updateMatrixWorld();
    source.publish(camera, 1.5);
    source.publish(camera, 1.6);
    source.publish(camera, 1.6); // same time again: dropped
    stop();
    source.publish(camera, 1.7);
    expect(got).toHaveLength(2);
    expect(got[0]).not.toBe(got[1]);
    expect(got[0].t).toBe(1.5);
    expect(got[0].position.map((v) => +v.toFixed(6))).toEqual([1, 1.6, 2]);
    expect(got[0].orientation.map((v) => +v.toFixed(6))).toEqual([0, +Math.SQRT1_2.toFixed(6), 0, +Math.SQRT1_2.toFixed(6)]);
  });
});

describe('RateMeter', () => {
  it('counts the events of the last second', () => {
    const meter = new RateMeter(8);
    for (let t = 0; t <= 2000; t += 100) meter.tick(t);
    expect(meter.perSecond(2000)).toBe(8); // capped by the ring
    const slow = new RateMeter();
    for (let t = 0; t <= 3000; t += 250) slow.tick(t);
    expect(slow.perSecond(3000)).toBe(5); // 2000, 2250, 2500, 2750, 3000
    expect(slow.perSecond(5000)).toBe(0);
  });
});
