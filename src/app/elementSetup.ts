/**
 * What `<holoquic-player>` builds when it loads: the `Player` from its attributes and the options
 * set in code (with the decode worker pool and the reconstruction path it needs), and the
 * `SceneRenderer` wired to that player. The element (component.ts) keeps their lifecycle; this
 * module only says how each is made and connected.
 */
import { createDecoderPool, type DecoderPoolStats } from '../decoder';
import type { SceneModel } from '../model/scene';
import { Player } from '../player/player';
import type { PlayerOptions } from '../player/options';
import type { PlayerStats } from '../player/report';
import { SPLAT_SHAPES, type SplatShape } from '../render/pointMaterial';
import { probeRenderer, type ReconstructionPath, reconstructionChoice, reconstructionFor } from '../render/rasterizer';
import { type RenderStats, SceneRenderer } from '../render/sceneRenderer';
import { createViewportModel } from '../viewport/visibility';
import { AttributeError, optionsFromAttributes } from './attributes';

/** Player options an embedding page may set in code (attributes cover the common ones). */
export type HoloquicPlayerOptions = Partial<Omit<PlayerOptions, 'manifestUrl'>>;

/** Where frames are reconstructed and why: the path, and the WebGL renderer it was chosen for. */
export type ReconstructionReport = { path: ReconstructionPath; renderer: string | null };

export interface HoloquicStats extends PlayerStats {
  /** Null when the element does not draw (`render="off"`) or has not loaded. */
  render: RenderStats | null;
  /** The element's decode worker pool (null when the page supplied its own decoder). */
  decoder: DecoderPoolStats | null;
  /**
   * Where frames are reconstructed and why: the path, and the WebGL renderer it was chosen for
   * (src/render/rasterizer.ts; null when not drawing).
   */
  reconstruction: ReconstructionReport | null;
}

/** A player built by `buildPlayer`, with what the element owns beside it. */
export interface BuiltPlayer {
  player: Player;
  /** The element's own decode worker pool; null when the options supplied a decoder. */
  decoder: ReturnType<typeof createDecoderPool> | null;
  /** Null when the element does not draw (`render="off"`). */
  reconstruction: ReconstructionReport | null;
}

/**
 * Creates the player for manifest `src` from the attributes (`attribute` reads one) and the
 * options set in code, which win over attributes — but an option left undefined does not erase
 * one. Throws an `Error` whose message says what is wrong (a bad attribute or option); nothing is
 * left running then.
 */
export function buildPlayer(src: string, attribute: (name: string) => string | null, codeOptions: HoloquicPlayerOptions): BuiltPlayer {
  let decoder: BuiltPlayer['decoder'] = null;
  try {
    const options = { ...optionsFromAttributes(attribute), ...definedOnly(codeOptions) };
    // Drawn frames the GPU can reconstruct exactly stay pictures + atlas ('auto') on a GPU;
    // on a software rasteriser, without drawing (experiments) or on request the workers
    // reconstruct points (src/render/rasterizer.ts).
    const drawing = attribute('render') !== 'off';
    const renderer = drawing ? probeRenderer() : null;
    const path = drawing ? reconstructionFor(reconstructionChoice(attribute('reconstruction')), renderer) : 'cpu';
    decoder = options.decoder ? null : createDecoderPool({ output: path === 'gpu' ? 'auto' : 'points' });
    const player = new Player({ viewport: defaultViewport, ...options, manifestUrl: src, decoder: options.decoder ?? decoder! });
    return { player, decoder, reconstruction: drawing ? { path, renderer } : null };
  } catch (e) {
    decoder?.close();
    throw new Error(e instanceof AttributeError || e instanceof Error ? e.message : String(e));
  }
}

/** Creates the renderer in `host` with the `splat` attribute's shape; throws when it cannot draw. */
export function openView(host: HTMLElement, splat: string | null): SceneRenderer {
  try {
    return new SceneRenderer(host, { splat: SPLAT_SHAPES.includes(splat as SplatShape) ? (splat as SplatShape) : undefined });
  } catch (e) {
    throw new Error(`cannot draw (WebGL2 unavailable?): ${e instanceof Error ? e.message : String(e)}`);
  }
}

/**
 * Connects the renderer to the player and starts drawing: the player's current frames are drawn,
 * the camera's projection goes to the player, and `onXRVisibility` hears the headset's visibility.
 */
export function connectView(view: SceneRenderer, player: Player, scene: SceneModel, onXRVisibility: () => void): void {
  view.setScene(scene);
  view.setFrameSource(() => player.currentFrames());
  view.onProjectionChange((p) => player.setViewport(p));
  view.onXRVisibilityChange(onXRVisibility);
  view.start();
}

function definedOnly<T extends object>(options: T): Partial<T> {
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * The viewport model the element gives its player: predicted head pose → ray-cast visible screen
 * fraction per object (src/viewport/visibility.ts), so the ranking follows the viewer.
 */
function defaultViewport(scene: SceneModel) {
  return Object.assign(createViewportModel(scene), { predictorName: 'default' });
}
