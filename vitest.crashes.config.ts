import { defineConfig } from 'vitest/config'
import base from './vitest.config.js'

// The NATS suites that kill servers under load, run alone (`pnpm run test:crashes`): a single server
// killed and restarted, and a node of a 3-node cluster. Not part of `pnpm test` yet: under load, a
// partition still stalls past their bounds now and then (a single server: `drain()` did not resolve in
// 5 of 20 runs with the other core busy). Resolves @flowing/* to source as the main config does.
export default defineConfig({
  ...(base.resolve === undefined ? {} : { resolve: base.resolve }),
  ...(base.ssr === undefined ? {} : { ssr: base.ssr }),
  test: {
    name: 'nats-crashes',
    root: 'packages/nats',
    include: ['test/cluster.test.ts', 'test/server-crash.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 90_000,
  },
})
