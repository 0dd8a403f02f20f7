/**
 * The shape of the import plan of an OCEL 2.0 log, without a service: reads FILE into a staging
 * file and plans it as `ocelog import` does (src/ocel/import/stage.ts, staged-plan.ts), then reads
 * the batches back in sending order and reports how long each phase took and the plan's shape
 * (planShape: batches, items per batch, and the critical path, the longest chain of batches each
 * waiting for the one before). The critical path bounds the sending phase from below whatever the
 * service's speed: that many requests answered one after the other (docs/import.md § Two bounds: the
 * plan's critical path, and the CPU of two cores).
 *
 * Usage: node dist/bench/plan-shape.js FILE [--timezone ZONE] [--staging-dir DIR] [--json]
 */
import { Command } from 'commander'
import { realpathSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { fileURLToPath } from 'node:url'
import { streamOcelFile } from '../src/ocel/import/read.js'
import { Staging } from '../src/ocel/import/stage.js'
import { planStaged } from '../src/ocel/import/staged-plan.js'
import { parseTimeZone } from '../src/ocel/import/time.js'
import { exitWhenStdoutCloses } from '../src/cli/stdout.js'
import { planShape, type PlanShape } from './plan-batches.js'
import { messageOf } from '../src/core/errors.js'

/** The phases' times (s) and the plan's shape. */
export interface PlanShapeReport extends PlanShape {
  file: string
  fileMiB: number
  events: number
  upserts: number
  readingSec: number
  planningSec: number
  /** Reading the planned actions back in sending order and cutting them into batches. */
  cuttingSec: number
}

/**
 * Stages and plans `file` in `stagingDir` (the staging file is removed at the end) and measures it.
 * @param zone the zone of timestamps without one, as `ocelog import --timezone` takes it.
 * @throws OcelReadError when the file is not an OCEL 2.0 log; parseTimeZone's error for a bad zone.
 */
export async function measurePlanShape(file: string, zone = 'UTC', stagingDir = tmpdir()): Promise<PlanShapeReport> {
  const staging = new Staging(stagingDir)
  try {
    const t0 = performance.now()
    const end = await streamOcelFile(file, parseTimeZone(zone), staging.sink(), undefined, staging.scratch())
    staging.typeText = end.typeText
    const t1 = performance.now()
    const plan = planStaged(staging)
    const t2 = performance.now()
    const shape = planShape(plan.batches())
    const t3 = performance.now()
    return {
      file,
      fileMiB: statSync(file).size / 2 ** 20,
      events: plan.events,
      upserts: plan.upserts,
      readingSec: (t1 - t0) / 1000,
      planningSec: (t2 - t1) / 1000,
      cuttingSec: (t3 - t2) / 1000,
      ...shape,
    }
  } finally {
    staging.remove()
  }
}

async function main(): Promise<void> {
  const program = new Command('plan-shape')
    .description("The import plan of an OCEL 2.0 log (JSON, XML or SQLite): each phase's time, its batches and its critical path")
    .argument('<file>', 'the OCEL 2.0 log')
    .option('--timezone <zone>', 'zone of timestamps that have none (as ocelog import)', 'UTC')
    .option('--staging-dir <dir>', 'where the staging file goes (removed at the end)', tmpdir())
    .option('--json', 'print the report as JSON')
    .parse(process.argv)
  const [file] = program.args
  const o = program.opts<{ timezone: string; stagingDir: string; json?: boolean }>()
  if (file === undefined) throw new Error('give an OCEL 2.0 log file')
  const r = await measurePlanShape(file, o.timezone, o.stagingDir)
  if (o.json === true) {
    process.stdout.write(`${JSON.stringify(r, null, 2)}\n`)
    return
  }
  const lines = [
    `${r.file}: ${r.fileMiB.toFixed(0)} MiB, ${String(r.events)} events and ${String(r.upserts)} object upserts planned`,
    `reading ${r.readingSec.toFixed(1)} s, planning ${r.planningSec.toFixed(1)} s, cutting ${r.cuttingSec.toFixed(1)} s`,
    `${String(r.batches)} batches: ${String(r.eventBatches)} of events (${r.meanEvents.toFixed(1)} items on average), ${String(r.upsertBatches)} of upserts (${r.meanUpserts.toFixed(1)})`,
    `critical path: ${String(r.criticalPath)} batches answered one after the other`,
  ]
  process.stdout.write(`${lines.join('\n')}\n`)
}

// Run as a command (node dist/bench/plan-shape.js …), not when imported (the tests import measurePlanShape).
if (process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  exitWhenStdoutCloses()
  main().catch((error: unknown) => {
    process.stderr.write(`plan-shape: ${messageOf(error)}\n`)
    process.exitCode = 1
  })
}
