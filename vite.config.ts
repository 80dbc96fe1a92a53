import { defineConfig } from 'vite';

// The web app is built into dist/ and served by the origin's HTTPS listener.
// Workers are ES modules so they can import the wasm decoder and the FEC codec.
export default defineConfig({
  root: '.',
  publicDir: 'public',
  build: {
    outDir: 'dist',
    target: 'es2022',
    sourcemap: true,
    rollupOptions: {
      // Pages: the app, the transport and decoder checks (also driven by the end-to-end tests).
      input: { main: 'index.html', transport: 'transport.html', decoder: 'decoder.html' },
    },
  },
  worker: { format: 'es' },
  server: { port: 5173 },
});
