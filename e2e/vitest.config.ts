import { defineConfig } from 'vitest/config';

// End-to-end tests: the real origin, real headless Chromium (playwright-core +
// Debian chromium), real content. They run one file at a time because they
// share the machine's two cores and fixed ports.
export default defineConfig({
  test: {
    include: ['e2e/**/*.e2e.ts'],
    environment: 'node',
    testTimeout: 180_000,
    hookTimeout: 240_000,
    fileParallelism: false,
  },
});
