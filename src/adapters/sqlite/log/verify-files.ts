/**
 * `ocelog verify` of the embedded default's files (README § Operations, docs/operations.md §
 * Verify): read-only checks of the log's `ocelog.db` and of each read-models file, each naming the first
 * bad position or table. Opens the files itself (never through the service's start checks, which
 * refuse a damaged log), read-only, and changes nothing.
 */
import Database from 'better-sqlite3'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { STREAM_PREFIX } from '../../../schemas/records.js'
import type { SqliteDatabase } from './database.js'
import { READ_MODELS_FILE_KINDS, READ_MODELS_FILE_NAMES } from '../read-models/read-models-database.js'
import { type RecordRow, rowToRecord } from '../../log-reads.js'
import { messageOf } from '../../../core/errors.js'

/** One check's outcome; `position` or `table` names the first bad place when it failed. */
export interface CheckResult {
  check: string
  ok: boolean
  detail: string
  position?: number
  table?: string
}

/** Rows read at once while the records are checked. */
const PAGE = 5000

function openReadOnly(path: string): SqliteDatabase {
  const db = new Database(path, { readonly: true, fileMustExist: true })
  db.pragma('busy_timeout = 5000')
  return db
}

function failure(check: string, error: unknown): CheckResult {
  const code = error instanceof Database.SqliteError ? `${error.code}: ` : ''
  return { check, ok: false, detail: `${code}${messageOf(error)}` }
}

/**
 * The log's checks: SQLite's `integrity_check` (the first problem it names, with the table or index
 * when SQLite says which); then, in one read transaction, every record in position order: positions
 * increase, the stream is `dataset-<dataset_id>` of its own row and the dataset exists, and the
 * record decodes by the one record decoder with its data checked against its schema.
 * @returns the checks and the head (null: empty or unreadable).
 */
export function verifyLogFile(dataDir: string): { checks: CheckResult[]; head: number | null; records: number } {
  const path = join(dataDir, 'ocelog.db')
  if (!existsSync(path)) return { checks: [{ check: 'log file', ok: false, detail: `${path} does not exist` }], head: null, records: 0 }
  let db: SqliteDatabase
  try {
    db = openReadOnly(path)
  } catch (error) {
    return { checks: [failure('log file', error)], head: null, records: 0 }
  }
  const checks: CheckResult[] = []
  let head: number | null = null
  let records = 0
  try {
    try {
      const rows = db.pragma('integrity_check(1)') as { integrity_check: string }[]
      const first = rows[0]?.integrity_check ?? 'ok'
      const table = /(?:table|index|of) (\w+)/.exec(first)?.[1]
      checks.push(
        first === 'ok'
          ? { check: 'integrity_check', ok: true, detail: 'ok' }
          : { check: 'integrity_check', ok: false, detail: first, ...(table === undefined ? {} : { table }) },
      )
    } catch (error) {
      checks.push(failure('integrity_check', error))
      return { checks, head, records }
    }
    try {
      const datasets = new Set((db.prepare('SELECT id FROM datasets').all() as { id: string }[]).map((r) => r.id))
      const page = db.prepare<[number, number], RecordRow & { dataset_id: string }>('SELECT * FROM records WHERE position > ? ORDER BY position LIMIT ?')
      let bad: CheckResult | null = null
      let last = -1
      db.exec('BEGIN')
      try {
        for (;;) {
          const rows = page.all(last, PAGE)
          for (const row of rows) {
            records += 1
            const problem =
              row.position <= last
                ? `position ${String(row.position)} does not increase (after ${String(last)})`
                : row.stream !== `${STREAM_PREFIX}${row.dataset_id}`
                  ? `its stream ${row.stream} is not the stream of its dataset ${row.dataset_id}`
                  : !datasets.has(row.dataset_id)
                    ? `its dataset ${row.dataset_id} does not exist`
                    : decodeProblem(row)
            if (problem !== null && bad === null)
              bad = { check: 'records', ok: false, detail: `record at position ${String(row.position)}: ${problem}`, position: row.position }
            last = Math.max(last, row.position)
          }
          if (rows.length < PAGE) break
        }
      } finally {
        db.exec('COMMIT')
      }
      head = last < 0 ? null : last
      checks.push(bad ?? { check: 'records', ok: true, detail: `${String(records)} record(s) decode, in increasing positions, each in its dataset's stream` })
    } catch (error) {
      checks.push(failure('records', error))
    }
  } finally {
    db.close()
  }
  return { checks, head, records }
}

function decodeProblem(row: RecordRow): string | null {
  try {
    rowToRecord(row, { checkData: true })
    return null
  } catch (error) {
    return messageOf(error)
  }
}

/**
 * The read models' checks (read-models.db and read-models-process.db, disposable), one result per
 * file: SQLite's `quick_check`, and no checkpoint beyond the log's `head`. A missing file passes (it
 * is made and rebuilt at the next start).
 */
export function verifyReadModelsFile(dataDir: string, head: number | null): CheckResult[] {
  return READ_MODELS_FILE_KINDS.map((kind) => verifyReadModelsOne(join(dataDir, READ_MODELS_FILE_NAMES[kind]), READ_MODELS_FILE_NAMES[kind], head))
}

function verifyReadModelsOne(path: string, name: string, head: number | null): CheckResult {
  if (!existsSync(path)) return { check: 'read models', ok: true, detail: `${name} is missing; it is made and rebuilt from the log at the next start` }
  let db: SqliteDatabase
  try {
    db = openReadOnly(path)
  } catch (error) {
    return { ...failure('read models', error), detail: `${name}: ${failure('read models', error).detail}` }
  }
  try {
    const rows = db.pragma('quick_check(1)') as { quick_check: string }[]
    const first = rows[0]?.quick_check ?? 'ok'
    if (first !== 'ok') return { check: 'read models', ok: false, detail: `${name}: ${first}; the service moves it aside and rebuilds it at its next start` }
    const checkpoints = db.prepare('SELECT projector, position FROM rm_checkpoints ORDER BY projector').all() as { projector: string; position: number }[]
    const ahead = checkpoints.find((c) => c.position > (head ?? 0))
    if (ahead !== undefined) {
      return {
        check: 'read models',
        ok: false,
        detail: `${name}: checkpoint of ${ahead.projector} is at position ${String(ahead.position)}, beyond the log's head ${String(head ?? 'none')} (read models of another log?)`,
        table: 'rm_checkpoints',
        position: ahead.position,
      }
    }
    return { check: 'read models', ok: true, detail: `${name}: ${String(checkpoints.length)} checkpoint(s), none beyond the log's head` }
  } catch (error) {
    return { ...failure('read models', error), detail: `${name}: ${failure('read models', error).detail}` }
  } finally {
    db.close()
  }
}
