import { defineConfig, type UserConfig } from 'vite';

// The web app is built into dist/ and served by the origin's HTTPS listener.
// Workers are ES modules so they can import the wasm decoder and the FEC codec.
const app: UserConfig = {
  root: '.',
  publicDir: 'public',
  build: {
    outDir: 'dist',
    target: 'es2022',
    sourcemap: true,
    rollupOptions: {
      // Pages: the app and the embedding example; and the transport, decoder and host-scene check pages and the
      // one-decoder benchmark page, which live with the tests and benchmarks that drive them (e2e/pages/, served
      // at /e2e/pages/*.html).
      input: {
        main: 'index.html',
        embed: 'embed.html',
        transport: 'e2e/pages/transport.html',
        decoder: 'e2e/pages/decoder.html',
        'host-scene': 'e2e/pages/host-scene.html',
        'decoder-bench': 'e2e/pages/decoder-bench.html',
      },
    },
  },
  worker: { format: 'es' },
  server: { port: 5173 },
};

// `vite build --mode lib` (npm run build:lib, and `npm pack` through prepack): the
// <holoquic-player> library as one ES module with its two workers beside it in dist-lib/assets/;
// tsc adds the .d.ts files. In library mode Vite inlines every asset, so each worker carries its
// wasm (the V-PCC core decoder, RaptorQ) as a data: URL — all but the optional HEVC module
// (`?no-inline`, src/decoder/hevcLocation.ts): its .mjs and .wasm stay files of their own,
// fetched only when needed, with their licence beside them.
const library: UserConfig = {
  // Relative asset URLs (resolved against the module's own URL): the library works wherever it is served from.
  base: './',
  publicDir: false,
  build: {
    outDir: 'dist-lib',
    target: 'es2022',
    sourcemap: true,
    lib: { entry: 'src/app/library.ts', formats: ['es'], fileName: 'holoquic-player' },
    rollupOptions: {
      // three.js is the host's (a peer dependency): one copy per page, so the element's renderer
      // and the app's scene share classes. The workers never import it.
      external: (id) => id === 'three' || id.startsWith('three/'),
      // The HEVC module's licence under a name a reader finds (vpcc-hevc.LICENSE.txt).
      output: { assetFileNames: (asset) => (asset.names[0]?.endsWith('.LICENSE.txt') ? 'assets/[name][extname]' : 'assets/[name]-[hash][extname]') },
    },
  },
  worker: {
    format: 'es',
    // Named by stage (holoquic-decode-worker-<hash>.js, holoquic-fec-worker-<hash>.js) so a CDN
    // listing or a CSP report says which is which.
    rollupOptions: { output: { entryFileNames: (chunk) => `assets/holoquic-${workerStage(chunk.facadeModuleId)}-worker-[hash].js` } },
  },
};

/** The stage a worker entry belongs to: its folder under src/ (decoder → decode, fec). */
function workerStage(entry: string | null): string {
  const folder = entry?.match(/src\/([a-z]+)\/worker\.ts$/)?.[1];
  return folder === 'decoder' ? 'decode' : (folder ?? 'module');
}

export default defineConfig(({ mode }) => (mode === 'lib' ? library : app));
