import { defineConfig } from 'vitest/config'
import base from './vitest.config.js'

// The NATS suite that kills a node of a 3-node cluster under load (`pnpm run test:cluster`). `pnpm test`
// runs it alone, after the other suites: beside their servers and processes, on 2 cores, the load would
// push the process suite's redelivery bounds (a session + 1.5 s) past themselves. Resolves @flowing/* to
// source as the main config does.
export default defineConfig({
  ...(base.resolve === undefined ? {} : { resolve: base.resolve }),
  ...(base.ssr === undefined ? {} : { ssr: base.ssr }),
  test: {
    name: 'nats-crashes',
    root: 'packages/nats',
    include: ['test/cluster.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 90_000,
  },
})
