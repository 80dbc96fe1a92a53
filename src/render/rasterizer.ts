/**
 * Which reconstruction path suits the GPU a page draws with. GPU reconstruction runs a vertex
 * shader over every atlas pixel: cheap on a real GPU, but on a software rasteriser (SwiftShader,
 * llvmpipe, …: headless browsers, VMs, machines without a driver) it is 10–25× slower than the
 * decode worker's wasm reconstruction (docs/benchmarks.md, "GPU reconstruction"). So the element
 * reconstructs in the worker there and in the shader on hardware; `reconstruction="cpu"` or
 * `"gpu"` overrides the choice.
 */

/** Where a frame's points are reconstructed: in the decode worker (`cpu`) or in the vertex shader (`gpu`). */
export type ReconstructionPath = 'cpu' | 'gpu';
/** The `reconstruction` attribute: a path, or `auto` (by the renderer, `reconstructionFor`). */
export type ReconstructionChoice = ReconstructionPath | 'auto';

/**
 * Renderer strings of software rasterisers: SwiftShader (Chromium's, also under ANGLE and Vulkan),
 * Mesa's llvmpipe, softpipe and lavapipe, Windows' WARP ("Microsoft Basic Render Driver") and
 * anything calling itself "Software" (macOS "Apple Software Renderer", "Software Adapter").
 */
const SOFTWARE_RENDERER = /swiftshader|llvmpipe|softpipe|lavapipe|microsoft basic render|software/i;

/** Whether a WebGL renderer string names a software rasteriser. */
export function isSoftwareRenderer(renderer: string): boolean {
  return SOFTWARE_RENDERER.test(renderer);
}

/** The GL parameter `WEBGL_debug_renderer_info` names for the unmasked renderer string. */
const UNMASKED_RENDERER_WEBGL = 0x9246;

/**
 * The renderer string of a WebGL context: the unmasked one where `WEBGL_debug_renderer_info`
 * exists (browsers mask `RENDERER` as "WebKit WebGL"; Chromium now gives the real one there too),
 * else `RENDERER`.
 */
export function rendererName(gl: Pick<WebGLRenderingContext, 'getExtension' | 'getParameter' | 'RENDERER'>): string {
  const unmasked = gl.getExtension('WEBGL_debug_renderer_info') ? gl.getParameter(UNMASKED_RENDERER_WEBGL) : null;
  return String(unmasked ?? gl.getParameter(gl.RENDERER) ?? '');
}

/**
 * The renderer string of the WebGL2 a page would draw with, read from a throwaway canvas whose
 * context is released at once; null where there is no WebGL2 (or no DOM).
 */
export function probeRenderer(): string | null {
  if (typeof document === 'undefined') return null;
  const gl = document.createElement('canvas').getContext('webgl2');
  if (!gl) return null;
  try {
    return rendererName(gl);
  } finally {
    gl.getExtension('WEBGL_lose_context')?.loseContext();
  }
}

/**
 * The path to use: the override when it names one, else the worker on a software rasteriser and
 * the shader on hardware (and the shader when the renderer is unknown: it is the path that
 * scales with a GPU, and the renderer itself will fail first without WebGL2).
 */
export function reconstructionFor(choice: ReconstructionChoice, renderer: string | null): ReconstructionPath {
  if (choice !== 'auto') return choice;
  return renderer !== null && isSoftwareRenderer(renderer) ? 'cpu' : 'gpu';
}

/** The `reconstruction` attribute's value (absent, empty or unknown: `auto`). */
export function reconstructionChoice(text: string | null): ReconstructionChoice {
  return text === 'cpu' || text === 'gpu' ? text : 'auto';
}
