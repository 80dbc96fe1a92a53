/**
 * Feeding the viewer into the `Player`'s viewport model: the poses of the current pose source
 * and the camera's projection, both of which may be set before the model exists (before the
 * scene is loaded) and are handed to it once it does.
 */
import type { PoseDrivenViewport, PoseSource } from '../model/pose';

export type Projection = { fovYDeg: number; aspect: number };

export class PoseFeed {
  private viewport: PoseDrivenViewport | null = null;
  private source: PoseSource | null = null;
  private stopSource: (() => void) | null = null;
  private projection: Projection = { fovYDeg: 60, aspect: 16 / 9 };

  /** The viewport model fed; null before `attach`. */
  get model(): PoseDrivenViewport | null {
    return this.viewport;
  }

  /** Starts feeding `viewport` (the scene's model): the projection now, the source's poses from now on. */
  attach(viewport: PoseDrivenViewport): void {
    this.viewport = viewport;
    viewport.setProjection(this.projection);
    if (this.source) this.setSource(this.source);
  }

  /** Where poses come from (null: none); the previous source is stopped. */
  setSource(source: PoseSource | null): void {
    this.stop();
    this.source = source;
    const viewport = this.viewport;
    if (source && viewport) this.stopSource = source.start((pose) => viewport.observe(pose));
  }

  /** The camera's projection, used to predict on-screen areas. */
  setProjection(projection: Projection): void {
    this.projection = projection;
    this.viewport?.setProjection(projection);
  }

  /** Stops the current source (playback is over); `setSource` starts one again. */
  stop(): void {
    this.stopSource?.();
    this.stopSource = null;
  }
}
