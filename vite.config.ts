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
      // Pages: the app and the embedding example; and the transport and decoder check pages, which
      // live with the end-to-end tests that drive them (e2e/pages/, served at /e2e/pages/*.html).
      input: {
        main: 'index.html',
        embed: 'embed.html',
        transport: 'e2e/pages/transport.html',
        decoder: 'e2e/pages/decoder.html',
      },
    },
  },
  worker: { format: 'es' },
  server: { port: 5173 },
};

// `vite build --mode lib` (npm run build:lib): the <holoquic-player> library as one ES module
// with its workers and wasm beside it in dist-lib/; tsc adds the .d.ts files.
const library: UserConfig = {
  // Relative asset URLs (resolved against the module's own URL): the library works wherever it is served from.
  base: './',
  publicDir: false,
  build: {
    outDir: 'dist-lib',
    target: 'es2022',
    sourcemap: true,
    lib: { entry: 'src/app/library.ts', formats: ['es'], fileName: 'holoquic-player' },
  },
  worker: { format: 'es' },
};

export default defineConfig(({ mode }) => (mode === 'lib' ? library : app));
