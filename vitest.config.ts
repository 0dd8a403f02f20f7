import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Integration and e2e suites start real processes (redis-server, the built service); keep the 2-core machine breathing.
    maxWorkers: 2,
  },
})
