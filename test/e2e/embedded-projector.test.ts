/**
 * e2e (README § Architecture): the embedded projector's worker thread, from the build (a worker
 * thread runs the compiled thread entry, dist/src/app/projector-thread.js). A worker that crashes is logged and started again
 * with a doubling back-off; once the cause is gone, it projects what the log holds, and each
 * commit of the log wakes it. `stop` ends it cleanly.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Worker } from 'node:worker_threads'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openDatabase, type SqliteDatabase } from '../../src/adapters/sqlite/log/database.js'
import { SqliteEventLog } from '../../src/adapters/sqlite/log/sqlite-event-log.js'
import { Ingest } from '../../src/write/ingest.js'
import type { EmbeddedProjector as EmbeddedProjectorClass } from '../../src/projector/embedded.js'
import type { FromWorker, ProjectorWorkerData, ToWorker } from '../../src/projector/worker.js'
import { requireBuild } from '../helpers/cli.js'
import { testContext } from '../helpers/sqlite.js'

/** The compiled class: its worker is the compiled thread entry, dist/src/app/projector-thread.js beside it. */
async function loadBuilt(): Promise<typeof EmbeddedProjectorClass> {
  requireBuild()
  const built = (await import(join(process.cwd(), 'dist/src/projector/embedded.js'))) as { EmbeddedProjector: typeof EmbeddedProjectorClass }
  return built.EmbeddedProjector
}

let dir: string
let db: SqliteDatabase
let log: SqliteEventLog
const lines: string[] = []
const logger = {
  info: (...args: unknown[]) => lines.push(String(args[args.length - 1])),
  warn: (...args: unknown[]) => lines.push(String(args[args.length - 1])),
  error: (...args: unknown[]) => lines.push(String(args[args.length - 1])),
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ocelog-embedded-projector-'))
  db = openDatabase(dir)
  log = new SqliteEventLog(db)
  lines.length = 0
})
afterEach(async () => {
  await log.close()
  db.close()
  rmSync(dir, { recursive: true, force: true })
})

/** A projection's checkpoint (default `events`), read through a fresh connection (null before the first apply). */
async function checkpoint(projection = 'events'): Promise<number | null> {
  const { openReadModelsDatabase } = await import('../../src/adapters/sqlite/read-models/read-models-database.js')
  const { db: rm } = openReadModelsDatabase(dir)
  try {
    // Each runner's checkpoints are in its own file: read-models.db, and read-models-process.db attached as `process`.
    const sql = 'SELECT position FROM main.rm_checkpoints WHERE projector = @p UNION ALL SELECT position FROM process.rm_checkpoints WHERE projector = @p'
    return (rm.prepare(sql).get({ p: projection }) as { position: number } | undefined)?.position ?? null
  } finally {
    rm.close()
  }
}

/**
 * Three events of ds1 (positions 1 to 3), the second a poison record for the entities runner alone: a
 * trigger on rm_events, which only that runner writes, refuses it.
 * @returns the ingest over the log, for more events.
 */
async function poisonForEntities(): Promise<Ingest> {
  const { openReadModelsDatabase } = await import('../../src/adapters/sqlite/read-models/read-models-database.js')
  const { db: rm } = openReadModelsDatabase(dir)
  rm.exec(`CREATE TRIGGER poison BEFORE INSERT ON rm_events WHEN NEW.event_type_id = (SELECT nid FROM rm_names WHERE name = 'Poison')
           BEGIN SELECT RAISE(ABORT, 'poisoned event type'); END`)
  rm.close()
  const ingest = new Ingest(log)
  for (const event of ['Create Order', 'Poison', 'Ship Order'])
    await ingest.recordEvents([{ event, timestamp: '2024-01-01T10:00:00Z', objects: [{ type: 'order', id: 'o1' }] }], testContext('ds1'))
  return ingest
}

async function until(condition: () => Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; log: ${lines.join(' | ')}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

describe('the embedded projector worker', () => {
  it('is started again with a doubling back-off after a crash, logged, and projects once the cause is gone', async () => {
    const EmbeddedProjector = await loadBuilt()
    await new Ingest(log).recordEvents([{ event: 'Create Order', objects: [{ type: 'order', id: 'o1' }] }], testContext('ds1'))
    // A folder where read-models.db belongs: the worker cannot open it, and crashes.
    mkdirSync(join(dir, 'read-models.db'))
    const projector: EmbeddedProjectorClass = new EmbeddedProjector({ dataDir: dir, logLevel: 'silent', logger, log, restartDelayMs: 50 })
    projector.start()
    try {
      // One worker per runner, each with its own back-off.
      const restarts = () => lines.filter((l) => l.startsWith('projector worker entities: exited with code 1; starting it again in'))
      await until(async () => restarts().length >= 2, 'two restarts of the entities worker')
      expect(restarts().slice(0, 2)).toEqual([
        'projector worker entities: exited with code 1; starting it again in 50 ms',
        'projector worker entities: exited with code 1; starting it again in 100 ms',
      ])
      expect(lines).toContain('projector worker entities: crashed')
      expect(lines).toContain('projector worker process: crashed')

      rmSync(join(dir, 'read-models.db'), { recursive: true })
      await until(async () => (await checkpoint()) === 1 && (await checkpoint('directly_follows')) === 1, 'the first record projected by both runners')
      // Each commit wakes the worker: the next record is projected without a restart.
      const starts = projector.starts
      await new Ingest(log).recordEvents([{ event: 'Ship Order', objects: [{ type: 'order', id: 'o1' }] }], testContext('ds1'))
      await until(async () => (await checkpoint()) === 2, 'the second record projected')
      expect(projector.starts).toBe(starts)
    } finally {
      await projector.stop()
    }
    expect(projector.stoppedWith).toEqual({})
  }, 30_000)

  it("runs with the API thread's old generation and a 24 MiB young generation", async () => {
    const EmbeddedProjector = await loadBuilt()
    const built = (await import(join(process.cwd(), 'dist/src/projector/embedded.js'))) as { workerHeapMb: () => number }
    const projector: EmbeddedProjectorClass = new EmbeddedProjector({ dataDir: dir, logLevel: 'silent', logger, log })
    projector.start()
    try {
      await until(async () => projector.workerLimits !== null, 'the worker to start')
      expect(projector.workerLimits).toMatchObject({ maxYoungGenerationSizeMb: 24, maxOldGenerationSizeMb: built.workerHeapMb() })
    } finally {
      await projector.stop()
    }
    expect(projector.workerLimits).toBeNull()
  })

  it('stops cleanly, and is not started again after a stop', async () => {
    const EmbeddedProjector = await loadBuilt()
    const projector: EmbeddedProjectorClass = new EmbeddedProjector({ dataDir: dir, logLevel: 'silent', logger, log })
    projector.start()
    await until(async () => (await checkpoint()) !== null || projector.starts === 2, 'the workers to start')
    await projector.stop()
    await new Promise((r) => setTimeout(r, 300))
    // One worker per runner, each started once.
    expect([projector.starts, lines.filter((l) => l.includes('exited'))]).toEqual([2, []])
  })
})

describe('the embedded projector, one worker per runner', () => {
  it('goes on with the process runner to the head while the entities runner stops on a record, and says which stopped', async () => {
    const EmbeddedProjector = await loadBuilt()
    const ingest = await poisonForEntities()
    const projector: EmbeddedProjectorClass = new EmbeddedProjector({ dataDir: dir, logLevel: 'silent', logger, log, restartDelayMs: 50 })
    projector.start()
    try {
      await until(async () => projector.stoppedWith.entities !== undefined, 'the entities runner to stop')
      await until(async () => (await checkpoint('directly_follows')) === 3, 'the process runner at the head')
      // A commit after the stop still wakes the process runner; the stopped runner is not started again.
      await ingest.recordEvents([{ event: 'Bill Order', timestamp: '2024-01-01T11:00:00Z', objects: [{ type: 'order', id: 'o1' }] }], testContext('ds1'))
      await until(async () => (await checkpoint('directly_follows')) === 4, 'the process runner at the new head')
      expect([await checkpoint('events'), projector.starts, Object.keys(projector.stoppedWith)]).toEqual([1, 2, ['entities']])
      expect(projector.stoppedWith.entities).toContain('stopped at the record at position 2 of stream dataset-ds1')
    } finally {
      await projector.stop()
    }
  }, 30_000)
})

describe('the projector thread of one runner', () => {
  /** Starts the compiled thread entry with `data`; collects its messages. */
  function startThread(data: ProjectorWorkerData): { worker: Worker; messages: FromWorker[]; exited: Promise<number> } {
    requireBuild()
    const worker = new Worker(join(process.cwd(), 'dist/src/app/projector-thread.js'), { workerData: data })
    const messages: FromWorker[] = []
    worker.on('message', (m: FromWorker) => messages.push(m))
    const exited = new Promise<number>((resolve) => worker.once('exit', resolve))
    return { worker, messages, exited }
  }

  it('applies only its runner: the process thread goes on to the head while the entities thread stops on a record', async () => {
    await poisonForEntities()

    const entities = startThread({ dataDir: dir, logLevel: 'silent', runner: 'entities' })
    const processes = startThread({ dataDir: dir, logLevel: 'silent', runner: 'process', checkpointsLog: false })
    try {
      // The entities thread retries the record (100 + 200 + 400 + 800 ms), then stops, says so, and exits.
      expect(await entities.exited).toBe(0)
      expect(entities.messages).toEqual([
        {
          type: 'projection-stopped',
          message: 'projection read-models/entities stopped at the record at position 2 of stream dataset-ds1 after 5 attempt(s): poisoned event type',
        },
      ])
      await until(async () => (await checkpoint('directly_follows')) === 3, 'the process runner at the head')
      expect([await checkpoint('events'), await checkpoint('objects'), processes.messages]).toEqual([1, 1, []])
    } finally {
      processes.worker.postMessage({ type: 'stop' } satisfies ToWorker)
      expect(await processes.exited).toBe(0)
    }
  }, 30_000)
})
