import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Unit tests: pure TypeScript modules under src/ (and the experiment tooling under scripts/), run in
// Node with simulated clocks.
export default defineConfig({
  resolve: {
    // npm raptorq declares only a browser "module" entry; Node-side tests need the same file.
    alias: { raptorq: fileURLToPath(new URL('node_modules/raptorq/raptorq.js', import.meta.url)) },
  },
  test: {
    include: ['src/**/*.test.ts', 'scripts/**/*.test.ts'],
    environment: 'node',
  },
});
