/**
 * PostgresReadModelQuery answers as SqliteReadModelQuery (docs/read-models.md#the-read-models-on-postgresql)
 * on the synthetic edge-case log (test/helpers/generated-ocel.ts) and on each distinct
 * real OCEL 2.0 log of the shared folder, each in its own dataset: one SQLite log, every log
 * imported into it the way `ocelog import` does, projected by the real Projector into SQLite's read
 * models and then, once, into PostgreSQL's (one database on the run's server,
 * test/helpers/postgres-global-setup.ts). Every read of the port, all time and in a window, compare
 * of two windows and the OCEL 2.0 export are asked of both and must be equal
 * (test/helpers/read-agreement.ts). The raw *.sqlite copies of the real logs hold the same logs as
 * the JSON and XML forms and are left out. Skipped, with the reason printed, without a server; the
 * real logs' part also without the shared logs (the generated log's part runs on every clone).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openPostgresPool } from '../../src/adapters/postgres/connection.js'
import { PostgresReadModelQuery } from '../../src/adapters/postgres/postgres-read-model-query.js'
import { PostgresReadModelStore } from '../../src/adapters/postgres/postgres-read-model-store.js'
import { migrate } from '../../src/adapters/postgres/schema.js'
import { SqliteReadModelQuery } from '../../src/adapters/sqlite/read-models/sqlite-read-model-query.js'
import { readOcelFile } from '../../src/ocel/import/read.js'
import { parseTimeZone } from '../../src/ocel/import/time.js'
import { Projector } from '../../src/projector/runner.js'
import { freshDatasetId } from '../contract/fixtures.js'
import { describeWithSharedOcel, ocelFixture, SHARED_OCEL_PRESENT } from '../helpers/fixtures.js'
import { writeControlCharactersOcel } from '../helpers/control-characters-ocel.js'
import { writeGeneratedOcel } from '../helpers/generated-ocel.js'
import { loadOcel } from '../helpers/load-ocel.js'
import { dropPostgresDatabase, freshPostgresDatabase, postgresAdminUrl } from '../helpers/postgres.js'
import { type Engines, expectSameAnswers } from '../helpers/read-agreement.js'
import { openSqliteFixture, type SqliteFixture } from '../helpers/sqlite.js'

const admin = postgresAdminUrl()

/** The distinct real logs (under the shared data/ocel/), each imported into its own dataset. */
const REAL_LOGS = [
  'raw/pm4py__ocel20_example.jsonocel',
  'raw/ocpa__ocel20_example.xmlocel',
  'derived/ocelescope__pallet-logistics-v0.9.ocel2.json',
  'derived/ocpa__logistics.ocel2.json',
  'derived/ocpa__running-example.ocel2.json',
]

/** A log loaded: its dataset and the event and object counts its import plan gives. */
interface Loaded {
  ds: string
  expected: { events: number; objects: number }
}

let fx: SqliteFixture
let url = ''
let pool: pg.Pool
let engines: Engines
const loaded = new Map<string, Loaded>()

/** Imports the log at `path` into a fresh dataset of the SQLite log (and SQLite's read models). */
async function load(name: string, path: string): Promise<void> {
  const ds = freshDatasetId()
  const plan = await loadOcel(readOcelFile(path, parseTimeZone('UTC')), ds, { log: fx.log, store: fx.store })
  loaded.set(name, { ds, expected: { events: plan.events, objects: plan.objects + plan.undefinedObjects.objects } })
}

beforeAll(async () => {
  if (admin === null) return
  fx = openSqliteFixture('ocelog-pg-agreement-')
  const generatedDir = mkdtempSync(join(tmpdir(), 'ocelog-pg-agreement-log-'))
  try {
    await load('generated', writeGeneratedOcel(generatedDir).json)
    await load('control characters', writeControlCharactersOcel(generatedDir))
  } finally {
    rmSync(generatedDir, { recursive: true, force: true })
  }
  if (SHARED_OCEL_PRESENT) for (const relative of REAL_LOGS) await load(relative, ocelFixture(relative))
  url = await freshPostgresDatabase(admin, 'agreement')
  pool = openPostgresPool(url, { max: 4 })
  await migrate(pool)
  // At the head the store analyzes its tables (PostgresReadModelStore.atHead). Before it did so for logs of this size, the reads
  // were planned on the statistics autovacuum took while the tables were nearly empty, and a read of one object's events in the
  // largest log ran for over 9 minutes on the server in CI.
  await new Projector(fx.log, new PostgresReadModelStore(pool)).catchUp()
  engines = { reference: new SqliteReadModelQuery(fx.rmDb), other: new PostgresReadModelQuery(pool), log: fx.log }
}, 300_000)

// Generous budgets: alone the real logs take seconds; beside the whole suite on 2 cores they take longer.
afterAll(async () => {
  await fx?.log.close()
  fx?.close()
  await pool?.end()
  if (admin !== null && url !== '') await dropPostgresDatabase(admin, url)
}, 600_000)

/** Compares every read of the log `name` and prints what was covered. */
async function agree(name: string): Promise<void> {
  const log = loaded.get(name)
  if (log === undefined) throw new Error(`${name} was not loaded`)
  const covered = await expectSameAnswers(engines, log.ds, log.expected)
  console.info(`agreement on ${name}: ${JSON.stringify(covered)}`)
}

describe('PostgreSQL read models answer as SQLite’s on the generated edge-case log', () => {
  it.skipIf(admin === null)('for every read, all time and in a window, compare and the export', { timeout: 60_000 }, async () => {
    await agree('generated')
    expect(loaded.get('generated')?.expected.events).toBe(7)
  })
})

describe('PostgreSQL read models answer as SQLite’s on names, ids and values holding U+0000 and U+0001', () => {
  it.skipIf(admin === null)('for every read, all time and in a window, compare and the export', { timeout: 60_000 }, async () => {
    await agree('control characters')
    expect(loaded.get('control characters')?.expected).toStrictEqual({ events: 6, objects: 4 })
  })
})

describeWithSharedOcel('PostgreSQL read models answer as SQLite’s on every real log', () => {
  for (const relative of REAL_LOGS) {
    it.skipIf(admin === null)(`${relative}: every read, compare and the export`, { timeout: 600_000 }, async () => {
      await agree(relative)
    })
  }
})
