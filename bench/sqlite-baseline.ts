/**
 * Baseline (b) of the benchmark (docs/performance.md#method, Baselines): raw appends of the log's own records into a
 * fresh SQLite file opened exactly as the service opens it (src/adapters/sqlite/log/database.ts: the
 * same `records` table, WAL, synchronous=FULL), one transaction per 100 records, the same INSERT
 * and the same JSON serialisation as the log adapter, and nothing else: no HTTP, no validation,
 * no identity claims, no projection.
 */
import Database from 'better-sqlite3'
import { join } from 'node:path'
import { openDatabase } from '../src/adapters/sqlite/log/database.js'

interface SourceRecord {
  stream: string
  dataset_id: string
  type: string
  version: number
  data: unknown
}

export interface RawAppendResult {
  /** Distinct records read from the source log. */
  sourceRecords: number
  /** Records appended in all passes. */
  appended: number
  seconds: number
  recordsPerSec: number
}

/**
 * Appends the records of `<sourceDir>/ocelog.db` into a new database in `workDir`, repeating the
 * whole log until at least `minSeconds` of appending were measured.
 * @throws when the source holds no records.
 */
export function rawAppendBaseline(sourceDir: string, workDir: string, minSeconds = 2): RawAppendResult {
  const source = new Database(join(sourceDir, 'ocelog.db'), { readonly: true, fileMustExist: true })
  const rows = source.prepare('SELECT stream, dataset_id, type, version, data FROM records ORDER BY position').all() as (Omit<SourceRecord, 'data'> & {
    data: string
  })[]
  source.close()
  if (rows.length === 0) throw new Error(`no records in ${sourceDir}/ocelog.db to append`)
  // Parsed outside the clock: the service's append starts from objects and serialises them.
  const records: SourceRecord[] = rows.map((r) => ({ ...r, data: JSON.parse(r.data) as unknown }))

  const db = openDatabase(workDir)
  const insert = db.prepare('INSERT INTO records (stream, dataset_id, type, version, data, appended_at) VALUES (?, ?, ?, ?, ?, ?)')
  const appendChunk = db.transaction((chunk: readonly SourceRecord[], appendedAt: string) => {
    for (const r of chunk) insert.run(r.stream, r.dataset_id, r.type, r.version, JSON.stringify(r.data), appendedAt)
  })
  let appended = 0
  const started = performance.now()
  let elapsed = 0
  do {
    for (let i = 0; i < records.length; i += 100) {
      appendChunk.immediate(records.slice(i, i + 100), new Date().toISOString())
    }
    appended += records.length
    elapsed = (performance.now() - started) / 1000
  } while (elapsed < minSeconds)
  db.close()
  return { sourceRecords: records.length, appended, seconds: elapsed, recordsPerSec: appended / elapsed }
}
