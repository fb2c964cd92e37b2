import { defineConfig } from 'vitest/config'

// One project per package; every project resolves @flowing/* to source through the private
// `@flowing/source` export condition, so tests never need a build.
const conditions = ['@flowing/source', 'import', 'module', 'node', 'default']
// Vitest passes the SSR conditions to its workers as `node --conditions`, which `require()` honours
// too: with `import` among them, a CommonJS dependency requiring a dual package (pg → pg-pool) would
// get its ESM build. Node adds `import` or `require` by itself, per kind of load.
const nodeConditions = ['@flowing/source', 'node', 'default']

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions: nodeConditions, externalConditions: nodeConditions } },
  test: {
    projects: [
      { extends: true, test: { name: 'core', root: 'packages/core', include: ['test/**/*.test.ts'] } },
      {
        extends: true,
        test: { name: 'timing-wheel', root: 'packages/timing-wheel', include: ['test/**/*.test.ts'] },
      },
      {
        extends: true,
        test: { name: 'backpressure', root: 'packages/backpressure', include: ['test/**/*.test.ts'] },
      },
      { extends: true, test: { name: 'watchdog', root: 'packages/watchdog', include: ['test/**/*.test.ts'] } },
      { extends: true, test: { name: 'sqlite', root: 'packages/sqlite', include: ['test/**/*.test.ts'] } },
      { extends: true, test: { name: 'threads', root: 'packages/threads', include: ['test/**/*.test.ts'] } },
      {
        extends: true,
        test: {
          name: 'postgres',
          root: 'packages/postgres',
          include: ['test/**/*.test.ts'],
          // One initdb for the run; each file copies it and starts its own server.
          globalSetup: ['test/global-setup.ts'],
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'nats',
          root: 'packages/nats',
          include: ['test/**/*.test.ts'],
          // Alone, after the rest (`pnpm run test:cluster`, vitest.crashes.config.ts): the 3-node cluster suite.
          exclude: ['test/cluster.test.ts'],
          // Each file starts its own nats-server (test/server.ts).
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      {
        extends: true,
        test: { name: 'prometheus', root: 'packages/prometheus', include: ['test/**/*.test.ts'] },
      },
      { extends: true, test: { name: 'tune', root: 'packages/tune', include: ['test/**/*.test.ts'] } },
      { extends: true, test: { name: 'errors', root: 'packages/errors', include: ['test/**/*.test.ts'] } },
      { extends: true, test: { name: 'otel', root: 'packages/otel', include: ['test/**/*.test.ts'] } },
      {
        extends: true,
        // Browser tests drive Debian's chromium.
        test: {
          name: 'dashboard',
          root: 'packages/dashboard',
          include: ['test/**/*.test.ts'],
          testTimeout: 60_000,
          // A page under load (CI runs every project at once) may take seconds to draw its first tick.
          expect: { poll: { timeout: 15_000, interval: 50 } },
        },
      },
      {
        extends: true,
        test: { name: 'docs', root: 'docs', include: ['**/*.test.ts'], exclude: ['api/**', '**/node_modules/**'] },
      },
      { extends: true, test: { name: 'benchmarks', root: 'benchmarks', include: ['test/**/*.test.ts'] } },
      { extends: true, test: { name: 'scripts', root: 'scripts', include: ['test/**/*.test.ts'] } },
    ],
  },
})
