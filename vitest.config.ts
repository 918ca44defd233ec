import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // PGlite runs initdb per instance (3-5 s) and Docker suites talk to a real
    // engine; the default 5 s is too tight for those, never for pure tests.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
