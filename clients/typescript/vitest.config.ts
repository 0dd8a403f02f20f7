import { defineConfig } from 'vitest/config'

/** The client's own tests (`npm test` in this folder; the service's `npm test` runs them too as its `client` project). */
export default defineConfig({
  test: {
    name: 'client',
    root: import.meta.dirname,
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
  },
})
