import { defineConfig } from 'vitest/config';

// Unit tests: pure TypeScript modules under src/, run in Node with simulated clocks.
export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    environment: 'node',
    passWithNoTests: true,
  },
});
