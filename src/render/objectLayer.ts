/**
 * One scene object on the GPU: a `THREE.Points` placed as the MPD says, drawing the object's
 * current decoded frame from a fixed pool of vertex buffers.
 *
 * Memory discipline (a session runs for hours at 30 content frames/s): the geometry is allocated
 * once, sized from the MPD's largest `pointsPerFrame`, and replaced only when a frame has more
 * points than it holds — then by one at least twice as large, so growth happens a handful of
 * times per session at most. A frame is uploaded only when it is a different frame object than
 * the one on the GPU, and only its `count` points (update ranges + draw range); the renderer
 * asking again at display rate costs nothing. Points are stored with four components (see
 * `packPoints`).
 *
 * A frame the decoder left as pictures + atlas (`AtlasFrame`) is reconstructed on the GPU instead:
 * the same `THREE.Points` then draws one vertex per atlas pixel with the atlas material
 * (atlasMaterial.ts) and no vertex buffers at all.
 */
import * as THREE from 'three';
import { type AtlasFrame, isAtlasFrame, type DecodedFrame, type PointFrame } from '../model/frames';
import { AtlasPointMaterial } from './atlasMaterial';
import { atlasVertexCount } from './atlasReconstruction';
import type { SceneObject } from '../model/scene';

/** Smallest pool, in points, so tiny first frames do not trigger a chain of doublings. */
const MIN_CAPACITY = 4096;

/** Pool size for `needed` points when `current` is too small: at least double. */
export function grownCapacity(current: number, needed: number): number {
  let capacity = Math.max(MIN_CAPACITY, current);
  while (capacity < needed) capacity *= 2;
  return capacity;
}

export class ObjectLayer {
  readonly points: THREE.Points;
  private geometry: THREE.BufferGeometry;
  private capacity: number;
  private shown: DecodedFrame | null = null;
  private atlas: AtlasPointMaterial | null = null;
  /** No attributes: the atlas material computes everything from gl_VertexID. */
  private atlasGeometry: THREE.BufferGeometry | null = null;
  /** Update range objects reused for every upload (three keeps the ones we push until it uploads). */
  private readonly positionRange = { start: 0, count: 0 };
  private readonly colorRange = { start: 0, count: 0 };
  private readonly localBounds: THREE.Sphere;
  /** Number of times a frame was uploaded, and of pool growths, for stats and tests. */
  uploads = 0;
  growths = 0;

  private readonly largest: number;
  private readonly basePointSizeM: number;

  constructor(readonly object: SceneObject, private readonly material: THREE.ShaderMaterial) {
    const largest = Math.max(0, ...object.representations.map((r) => r.pointsPerFrame));
    this.largest = largest;
    this.basePointSizeM = material.uniforms.pointSize.value as number;
    this.capacity = grownCapacity(0, Math.ceil(largest * 1.1));
    this.localBounds = localBoundingSphere(object);
    this.geometry = this.allocate(this.capacity);
    this.points = new THREE.Points(this.geometry, material);
    this.points.name = object.id;
    this.points.position.fromArray(object.position);
    this.points.quaternion.fromArray(object.rotation);
    this.points.scale.setScalar(object.scale);
    this.points.visible = false;
  }

  /** Points the pool holds without growing. */
  get pointCapacity(): number {
    return this.capacity;
  }

  /** Whether the drawn frame is reconstructed in the vertex shader. */
  get gpuReconstructed(): boolean {
    return this.points.visible && !!this.shown && isAtlasFrame(this.shown);
  }

  /** Points drawn now. */
  get drawnPoints(): number {
    if (!this.points.visible) return 0;
    const shown = this.shown;
    return shown && isAtlasFrame(shown) ? shown.maxPoints : this.geometry.drawRange.count;
  }

  /**
   * Makes `frame` the drawn frame (null hides the object). Uploads only when it differs from the
   * frame already on the GPU; returns whether the object's picture changed.
   */
  show(frame: DecodedFrame | null): boolean {
    if (frame === this.shown) return false;
    this.shown = frame;
    if (frame && isAtlasFrame(frame)) return this.showAtlas(frame);
    if (!frame || frame.count === 0) {
      const wasVisible = this.points.visible;
      this.points.visible = false;
      return wasVisible;
    }
    if (frame.positions.length < frame.count * 3 || frame.colors.length < frame.count * 3) {
      throw new Error(`object ${this.object.id}: frame of ${frame.count} points has ${frame.positions.length / 3} positions and ${frame.colors.length / 3} colours`);
    }
    if (frame.count > this.capacity) this.grow(frame.count);
    this.points.geometry = this.geometry;
    this.points.material = this.material;
    const positions = this.geometry.getAttribute('position') as THREE.BufferAttribute;
    const colors = this.geometry.getAttribute('rgb') as THREE.BufferAttribute;
    packPoints(frame, positions.array as Int16Array, colors.array as Uint8Array);
    this.markUpdated(positions, frame.count * 4, this.positionRange);
    this.markUpdated(colors, frame.count * 4, this.colorRange);
    this.geometry.setDrawRange(0, frame.count);
    this.material.uniforms.pointSize.value = this.basePointSizeM * sparseness(this.largest, frame.count);
    this.points.visible = true;
    this.uploads++;
    return true;
  }

  /** GPU reconstruction of `frame`: new textures, one vertex per atlas pixel and map. */
  private showAtlas(frame: AtlasFrame): boolean {
    if (!this.atlas) {
      this.atlas = new AtlasPointMaterial(this.material);
      this.atlasGeometry = new THREE.BufferGeometry();
      this.atlasGeometry.boundingSphere = this.localBounds.clone();
    }
    this.atlas.setFrame(frame);
    this.atlasGeometry!.setDrawRange(0, atlasVertexCount(frame));
    this.points.geometry = this.atlasGeometry!;
    this.points.material = this.atlas.material;
    this.material.uniforms.pointSize.value = this.basePointSizeM * sparseness(this.largest, frame.maxPoints);
    this.points.visible = frame.maxPoints > 0;
    this.uploads++;
    return true;
  }

  dispose(): void {
    this.atlas?.dispose();
    this.atlasGeometry?.dispose();
    this.geometry.dispose();
    this.points.removeFromParent();
  }

  /** Tells three to upload the first `values` elements of `attribute` (and nothing else). */
  private markUpdated(attribute: THREE.BufferAttribute, values: number, range: { start: number; count: number }): void {
    range.count = values;
    attribute.updateRanges.length = 0;
    attribute.updateRanges.push(range);
    attribute.needsUpdate = true;
  }

  private grow(needed: number): void {
    this.capacity = grownCapacity(this.capacity, needed);
    this.geometry.dispose();
    this.geometry = this.allocate(this.capacity);
    this.points.geometry = this.geometry;
    this.growths++;
  }

  private allocate(capacity: number): THREE.BufferGeometry {
    const geometry = new THREE.BufferGeometry();
    // Four components per point, the fourth unused (see packPoints).
    const positions = new THREE.BufferAttribute(new Int16Array(capacity * 4), 4, false);
    const colors = new THREE.BufferAttribute(new Uint8Array(capacity * 4), 4, true);
    positions.setUsage(THREE.DynamicDrawUsage);
    colors.setUsage(THREE.DynamicDrawUsage);
    geometry.setAttribute('position', positions);
    geometry.setAttribute('rgb', colors);
    geometry.setDrawRange(0, 0);
    // Known from the MPD: three never has to scan the points to cull the object.
    geometry.boundingSphere = this.localBounds.clone();
    return geometry;
  }
}

/**
 * Copies a frame's `xyz`/`rgb` triples into the pools' four-component layout. Three-component
 * 16-bit and 8-bit vertex formats are not required by Vulkan or D3D11, and ANGLE (Chromium's GL)
 * apparently converts such buffers on the CPU after every upload: in headless Chromium a frame
 * with new content at 1 M points took 2.3 s with three components and 0.85–1 s with four, this
 * copy included (docs/benchmarks.md "Renderer").
 */
export function packPoints(frame: PointFrame, positions: Int16Array, colors: Uint8Array): void {
  const p = frame.positions;
  const c = frame.colors;
  const n = frame.count * 3;
  for (let i = 0, j = 0; i < n; i += 3, j += 4) {
    positions[j] = p[i];
    positions[j + 1] = p[i + 1];
    positions[j + 2] = p[i + 2];
    colors[j] = c[i];
    colors[j + 1] = c[i + 1];
    colors[j + 2] = c[i + 2];
  }
}

/**
 * How much larger points must be to close the gaps of a sparser representation: lower rungs of
 * the ladder sample the same surface with fewer points (level-of-detail patches), so spacing
 * grows as √(densest / this) — the surface is 2-D. Clamped to 1…4.
 */
export function sparseness(densestPoints: number, points: number): number {
  if (!(densestPoints > 0) || !(points > 0)) return 1;
  return Math.min(4, Math.max(1, Math.sqrt(densestPoints / points)));
}

/** The MPD's scene-metre bounding box as a sphere in the object's voxel coordinates. */
export function localBoundingSphere(object: SceneObject): THREE.Sphere {
  const min = new THREE.Vector3().fromArray(object.bbox.min);
  const max = new THREE.Vector3().fromArray(object.bbox.max);
  const centre = min.clone().add(max).multiplyScalar(0.5);
  const radius = min.distanceTo(max) / 2;
  const toLocal = new THREE.Matrix4()
    .compose(new THREE.Vector3().fromArray(object.position), new THREE.Quaternion().fromArray(object.rotation), new THREE.Vector3().setScalar(object.scale))
    .invert();
  return new THREE.Sphere(centre.applyMatrix4(toLocal), radius / object.scale);
}
