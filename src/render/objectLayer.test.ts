import * as THREE from 'three';
import { describe, expect, it } from 'vitest';
import type { AtlasFrame, PointFrame } from '../model/frames';
import type { SceneObject } from '../model/scene';
import { grownCapacity, localBoundingSphere, ObjectLayer, sparseness } from './objectLayer';
import { createPointMaterial } from './pointMaterial';

const object = (pointsPerFrame: number): SceneObject => ({
  id: 'dancer', codecs: 'v3c1.avc', position: [2, 0, 0], rotation: [0, Math.SQRT1_2, 0, Math.SQRT1_2], scale: 0.002,
  bbox: { min: [1.5, 0, -0.5], max: [2.5, 2, 0.5] },
  representations: [{ id: '0', rank: 0, bandwidth: 1, avgBandwidth: 1, pointsPerFrame }],
  loopSegments: 1, playMode: 'loop', startNumber: 1, mediaTemplate: '$RepresentationID$/seg-$Number%05d$.v3c',
});

function frame(count: number, seed = 1): PointFrame {
  const positions = new Int16Array(count * 3).map((_, i) => (i * seed) % 1024);
  const colors = new Uint8Array(count * 3).map((_, i) => (i + seed) % 256);
  return { count, positions, colors };
}

const layerFor = (pointsPerFrame: number) => new ObjectLayer(object(pointsPerFrame), createPointMaterial({ pointSizeM: 0.003 }));

/** A 64×32 atlas with two maps and one patch (the layer does not look inside). */
function atlasFrame(): AtlasFrame {
  const plane = (w: number, h: number) => ({ width: w, height: h, samples: new Uint8Array(w * h) });
  return {
    kind: 'atlas', maxPoints: 1200,
    params: {
      atlasWidth: 64, atlasHeight: 32, blockSize: 16, mapCount: 2, absoluteD1: true, removeDuplicates: false, sizeQuantizer: false,
      lossyThreshold: 0, bitDepth3d: 10, hasAttribute: true, unsupported: 0, postProcessing: 0,
    },
    occupancy: plane(16, 8), geometry: [plane(64, 32), plane(64, 32)],
    attribute: [0, 1].map(() => ({ y: plane(64, 32), u: plane(32, 16), v: plane(32, 16), bitDepth: 8 })),
    patches: new Int32Array(20), blockToPatch: new Uint32Array(8), blocksWide: 4,
  };
}

describe('ObjectLayer', () => {
  it('draws an atlas frame with the reconstruction material, one vertex per pixel and map, and points again after', () => {
    const layer = layerFor(10_000);
    const cpuMaterial = layer.points.material;
    expect(layer.show(atlasFrame())).toBe(true);
    expect(layer.gpuReconstructed).toBe(true);
    expect(layer.points.material).not.toBe(cpuMaterial);
    expect(layer.points.geometry.drawRange.count).toBe(64 * 32 * 2);
    expect(layer.points.geometry.getAttribute('position')).toBeUndefined();
    expect(layer.drawnPoints).toBe(1200);
    const uniforms = (layer.points.material as THREE.ShaderMaterial).uniforms;
    expect(uniforms.uOccupancy.value).toBeInstanceOf(THREE.DataTexture);
    expect(Array.from(uniforms.uAtlasSize.value as Int32Array)).toEqual([64, 32]);
    // Size and splat uniforms are the CPU material's own objects: one viewport update serves both.
    expect(uniforms.viewportHeight).toBe((cpuMaterial as THREE.ShaderMaterial).uniforms.viewportHeight);
    expect(layer.show(frame(500))).toBe(true);
    expect(layer.gpuReconstructed).toBe(false);
    expect(layer.points.material).toBe(cpuMaterial);
    expect(layer.points.geometry.drawRange.count).toBe(500);
  });

  it('places the object as the MPD says: scene = position + rotate(q, scale · p)', () => {
    const layer = layerFor(100);
    layer.points.updateMatrixWorld();
    // A quarter turn about +Y maps +X to −Z.
    const p = new THREE.Vector3(500, 0, 0).applyMatrix4(layer.points.matrixWorld);
    expect(p.x).toBeCloseTo(2);
    expect(p.y).toBeCloseTo(0);
    expect(p.z).toBeCloseTo(-1);
  });

  it('sizes the pool from the MPD and uploads only a changed frame, only its points', () => {
    const layer = layerFor(10_000);
    expect(layer.pointCapacity).toBeGreaterThanOrEqual(11_000);
    const f = frame(5000);
    expect(layer.show(f)).toBe(true);
    expect(layer.show(f)).toBe(false);
    const positions = layer.points.geometry.getAttribute('position') as THREE.BufferAttribute;
    expect(positions.array).toBeInstanceOf(Int16Array);
    expect(positions.normalized).toBe(false);
    expect(positions.itemSize).toBe(4);
    expect(positions.updateRanges).toEqual([{ start: 0, count: 20_000 }]);
    const colors = layer.points.geometry.getAttribute('rgb') as THREE.BufferAttribute;
    expect(colors.array).toBeInstanceOf(Uint8Array);
    expect(colors.normalized).toBe(true);
    for (const i of [0, 1, 2499, 4999]) {
      expect(Array.from(positions.array.slice(i * 4, i * 4 + 3))).toEqual(Array.from(f.positions.slice(i * 3, i * 3 + 3)));
      expect(Array.from(colors.array.slice(i * 4, i * 4 + 3))).toEqual(Array.from(f.colors.slice(i * 3, i * 3 + 3)));
    }
    expect(layer.points.geometry.drawRange.count).toBe(5000);
    expect(layer.drawnPoints).toBe(5000);
    expect(layer.uploads).toBe(1);
  });

  it('keeps its geometry across frames and grows by doubling only when a frame does not fit', () => {
    const layer = layerFor(10_000);
    const geometry = layer.points.geometry;
    const capacity = layer.pointCapacity;
    for (let i = 0; i < 50; i++) layer.show(frame(8000 + i, i + 1));
    expect(layer.points.geometry).toBe(geometry);
    layer.show(frame(capacity + 1));
    expect(layer.growths).toBe(1);
    expect(layer.pointCapacity).toBe(capacity * 2);
    expect(layer.points.geometry.drawRange.count).toBe(capacity + 1);
  });

  it('hides the object without a frame and rejects a frame shorter than its count', () => {
    const layer = layerFor(100);
    layer.show(frame(10));
    expect(layer.show(null)).toBe(true); // the picture changed
    expect(layer.show(null)).toBe(false);
    expect(layer.points.visible).toBe(false);
    expect(layer.drawnPoints).toBe(0);
    expect(() => layer.show({ count: 10, positions: new Int16Array(9), colors: new Uint8Array(30) })).toThrow(/10 points has 3 positions/);
  });

  it('bounds the points by the MPD box, in voxel units', () => {
    const sphere = localBoundingSphere(object(1));
    const toScene = new THREE.Matrix4().compose(new THREE.Vector3(2, 0, 0), new THREE.Quaternion(0, Math.SQRT1_2, 0, Math.SQRT1_2), new THREE.Vector3().setScalar(0.002));
    const centre = sphere.center.clone().applyMatrix4(toScene);
    expect(centre.toArray().map((v) => +v.toFixed(6))).toEqual([2, 1, 0]);
    expect(sphere.radius * 0.002).toBeCloseTo(Math.hypot(1, 2, 1) / 2);
  });
});

describe('grownCapacity', () => {
  it('doubles until the frame fits', () => {
    expect(grownCapacity(10_000, 10_001)).toBe(20_000);
    expect(grownCapacity(10_000, 50_000)).toBe(80_000);
    expect(grownCapacity(0, 1)).toBe(4096);
  });
});

describe('sparseness', () => {
  it('grows points as the square root of the density ratio, within 1…4', () => {
    expect(sparseness(72_000, 18_000)).toBe(2);
    expect(sparseness(72_000, 72_000)).toBe(1);
    expect(sparseness(72_000, 90_000)).toBe(1);
    expect(sparseness(72_000, 100)).toBe(4);
    expect(sparseness(0, 100)).toBe(1);
  });

  it('sets the layer point size for the frame shown', () => {
    const material = createPointMaterial({ pointSizeM: 0.003 });
    const layer = new ObjectLayer(object(20_000), material);
    layer.show(frame(5000));
    expect(material.uniforms.pointSize.value).toBeCloseTo(0.006);
    layer.show(frame(20_000));
    expect(material.uniforms.pointSize.value).toBeCloseTo(0.003);
  });
});
