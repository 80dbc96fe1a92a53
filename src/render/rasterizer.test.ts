import { describe, expect, it } from 'vitest';
import { isSoftwareRenderer, reconstructionChoice, reconstructionFor, rendererName } from './rasterizer';

/** Renderer strings as browsers report them (unmasked). */
const SOFTWARE = [
  'ANGLE (Google, Vulkan 1.3.0 (SwiftShader Device (Subzero) (0x0000C0DE)), SwiftShader driver)',
  'Google SwiftShader',
  'llvmpipe (LLVM 15.0.6, 256 bits)',
  'Mesa/X.org, llvmpipe (LLVM 15.0.6, 256 bits)',
  'ANGLE (Mesa, llvmpipe (LLVM 15.0.7, 256 bits), OpenGL 4.5)',
  'Gallium 0.4 on softpipe',
  'ANGLE (Microsoft, Microsoft Basic Render Driver Direct3D11 vs_5_0 ps_5_0, D3D11)',
  'Apple Software Renderer',
  'ANGLE (Unknown, Software Adapter, D3D11)',
];
const HARDWARE = [
  'ANGLE (NVIDIA, NVIDIA GeForce RTX 3080 (0x00002206) Direct3D11 vs_5_0 ps_5_0, D3D11)',
  'ANGLE (Intel, Mesa Intel(R) UHD Graphics 620 (KBL GT2), OpenGL 4.6)',
  'ANGLE (AMD, AMD Radeon RX 6800 XT (radeonsi, navi21, LLVM 15.0.6, DRM 3.49, 6.1.0), OpenGL 4.6)',
  'Apple M1',
  'ANGLE (Qualcomm, Adreno (TM) 650, OpenGL ES 3.2)',
  'Mali-G78',
];

describe('software rasterisers are told from GPUs by their renderer string', () => {
  it.each(SOFTWARE)('software: %s', (name) => {
    expect(isSoftwareRenderer(name)).toBe(true);
    expect(reconstructionFor('auto', name)).toBe('cpu');
  });

  it.each(HARDWARE)('hardware: %s', (name) => {
    expect(isSoftwareRenderer(name)).toBe(false);
    expect(reconstructionFor('auto', name)).toBe('gpu');
  });

  it('an override wins either way; an unknown renderer gets the GPU path', () => {
    expect(reconstructionFor('gpu', SOFTWARE[0])).toBe('gpu');
    expect(reconstructionFor('cpu', HARDWARE[0])).toBe('cpu');
    expect(reconstructionFor('auto', null)).toBe('gpu');
    expect(['cpu', 'gpu', 'auto', '', null, 'fast'].map(reconstructionChoice)).toEqual(['cpu', 'gpu', 'auto', 'auto', 'auto', 'auto']);
  });

  it('reads the unmasked renderer where WEBGL_debug_renderer_info exists, RENDERER otherwise', () => {
    const RENDERER = 0x1f01;
    const gl = (debugInfo: boolean) => ({
      RENDERER,
      getExtension: (name: string) => (name === 'WEBGL_debug_renderer_info' && debugInfo ? { UNMASKED_RENDERER_WEBGL: 0x9246 } : null),
      getParameter: (p: number) => (p === 0x9246 ? SOFTWARE[0] : p === RENDERER ? 'WebKit WebGL' : null),
    });
    expect(rendererName(gl(true) as never)).toBe(SOFTWARE[0]);
    expect(rendererName(gl(false) as never)).toBe('WebKit WebGL');
  });
});
