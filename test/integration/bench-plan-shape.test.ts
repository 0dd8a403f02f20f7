/**
 * bench/plan-shape.ts measures the plan `ocelog import` sends: on a small generated log, its staged
 * plan has the shape of the in-memory plan of the same log (planImport), and the staging file is removed.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { writeLargeOcelJson } from '../../bench/large-ocel.js'
import { measurePlanShape } from '../../bench/plan-shape.js'
import { planShape } from '../../bench/plan-batches.js'
import { planImport } from '../../src/ocel/import/memory-plan.js'
import { readOcelFile } from '../../src/ocel/import/read.js'
import { parseTimeZone } from '../../src/ocel/import/time.js'

const dir = mkdtempSync(join(tmpdir(), 'ocelog-plan-shape-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('measurePlanShape', () => {
  it('gives the staged plan the shape of the in-memory plan of the same log, and removes its staging file', async () => {
    const file = join(dir, 'log.json')
    const counts = writeLargeOcelJson(file, 300)
    const staging = join(dir, 'staging')
    mkdirSync(staging)
    const report = await measurePlanShape(file, 'UTC', staging)
    const plan = planImport(readOcelFile(file, parseTimeZone('UTC')))
    expect(report.events).toBe(counts.events)
    expect(report.events).toBe(plan.events)
    expect(report.upserts).toBe(plan.upserts)
    const { batches, eventBatches, upsertBatches, meanEvents, meanUpserts, criticalPath } = report
    expect({ batches, eventBatches, upsertBatches, meanEvents, meanUpserts, criticalPath }).toEqual(planShape(plan.batches))
    // One order in ten changes between its events: the plan has a chain longer than the initial values and one event batch.
    expect(criticalPath).toBeGreaterThan(2)
    expect(readdirSync(staging)).toEqual([])
  })
})
