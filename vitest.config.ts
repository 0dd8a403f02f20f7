import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

/**
 * Test tiers, one vitest project per folder (README § Tests):
 * - unit: test/unit, no I/O at all (no files, sockets, processes); test/integration/unit-tier.test.ts keeps it so;
 * - api: HTTP through the Fastify app (inject or a socket of 127.0.0.1), real SQLite files;
 * - integration: real files, SQLite, redis-server, child processes;
 * - contract: one suite per port, run against every adapter: PostgreSQL on the run's server (test/helpers/postgres-global-setup.ts);
 *   MongoDB and EventStoreDB on one container each for the whole run where Docker answers (test/helpers/engines-global-setup.ts),
 *   else those suites skip and say why, or fail with OCELOG_REQUIRE_ENGINES=1 (docs/operations.md#engines-in-tests);
 * - client: the TypeScript client's own tests (clients/typescript/test, its own vitest config);
 * - e2e: the built service and CLI as processes, and what reads the build's output (needs `npm run build`).
 * `npm run test:fast` runs unit, api, integration and client (nothing there needs a build), without the property tests, the files
 * that spend most of their time on the real OCEL 2.0 logs (*.logs.test.ts) and the long concurrency stress tests (*.stress.test.ts);
 * `npm test` runs every project and file.
 */
const tier = (name: string, include: string[], globalSetup: string[] = []) => ({ extends: true as const, test: { name, include, globalSetup } })
/** One PostgreSQL server per run for the tiers whose suites use it (test/helpers/postgres-global-setup.ts). */
const postgres = ['test/helpers/postgres-global-setup.ts']

export default defineConfig({
  // `@ocelog/client` (a workspace) from its TypeScript sources, as `npm run typecheck` reads it, so no tier needs the client built.
  // Aliases, not a resolve condition: vitest hands conditions on to Node (--conditions), and a worker thread that a test starts
  // from dist/ would then load the client's .ts sources.
  resolve: {
    alias: [
      { find: /^@ocelog\/client$/, replacement: fileURLToPath(new URL('clients/typescript/src/index.ts', import.meta.url)) },
      { find: /^@ocelog\/client\/contract$/, replacement: fileURLToPath(new URL('clients/typescript/src/contract/index.ts', import.meta.url)) },
    ],
  },
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Integration and e2e suites start real processes (redis-server, the built service); keep the 2-core machine breathing.
    maxWorkers: 2,
    projects: [
      tier('unit', ['test/unit/**/*.test.ts']),
      tier('api', ['test/api/**/*.test.ts']),
      tier('integration', ['test/integration/**/*.test.ts'], postgres),
      tier('contract', ['test/contract/**/*.test.ts'], [...postgres, 'test/helpers/engines-global-setup.ts']),
      'clients/typescript',
      tier('e2e', ['test/e2e/**/*.test.ts'], postgres),
    ],
  },
})
