import { defineConfig } from 'vitest/config'

// One project per package; every project resolves @flowing/* to source through the private
// `@flowing/source` export condition, so tests never need a build.
const conditions = ['@flowing/source', 'import', 'module', 'node', 'default']

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions, externalConditions: conditions } },
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
      { extends: true, test: { name: 'errors', root: 'packages/errors', include: ['test/**/*.test.ts'] } },
      { extends: true, test: { name: 'docs', root: 'docs', include: ['**/*.test.ts'] } },
      { extends: true, test: { name: 'benchmarks', root: 'benchmarks', include: ['test/**/*.test.ts'] } },
      { extends: true, test: { name: 'scripts', root: 'scripts', include: ['test/**/*.test.ts'] } },
    ],
  },
})
