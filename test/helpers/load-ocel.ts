/**
 * Loads an OCEL 2.0 log into a dataset the way `ocelog import` does, without HTTP: the log's
 * declarations first (src/ocel/import/declarations.ts, validated and built as POST /v1/types does),
 * then the real import plan (src/ocel/import/memory-plan.ts), its batches turned into records with
 * the ingest path's pure builders and appended to the real log in plan order, then the real
 * Projector catches the read models up. Batches are appended one after the other, so events with equal times get log
 * positions in file order.
 */
import { randomUUID } from 'node:crypto'
import { Projector } from '../../src/projector/runner.js'
import { newEventId } from '../../src/core/ids.js'
import { buildEventRecorded, buildObjectUpserted, buildTypesDeclared, type RecordContext } from '../../src/core/records.js'
import { validateTypes } from '../../src/core/validation.js'
import { declarationRequests } from '../../src/ocel/import/declarations.js'
import type { OcelLog } from '../../src/ocel/import/model.js'
import { planImport } from '../../src/ocel/import/memory-plan.js'
import type { ImportPlan } from '../../src/ocel/import/plan.js'
import type { EventLog } from '../../src/ports/event-log.js'
import type { ReadModelStore } from '../../src/ports/read-model-store.js'

/** Appends the plan of `log` to `datasetId`'s stream and projects it. @returns the plan (its counts and skips). */
export async function loadOcel(ocel: OcelLog, datasetId: string, deps: { log: EventLog; store: ReadModelStore }): Promise<ImportPlan> {
  const ctxOf = (): RecordContext => ({ datasetId, keyId: 'key_load', requestId: `req_${randomUUID()}`, receivedAt: new Date().toISOString() })
  for (const body of declarationRequests(ocel.eventTypes, ocel.objectTypes, '').requests) {
    const v = validateTypes(body)
    if (!v.ok) throw new Error(`loadOcel: the declarations were refused: ${JSON.stringify(v.errors)}`)
    await deps.log.append(datasetId, [buildTypesDeclared(v.value, ctxOf())], [])
  }
  const plan = planImport(ocel)
  for (const batch of plan.batches) {
    const ctx = ctxOf()
    const records =
      batch.kind === 'events'
        ? batch.items.map((item) => buildEventRecorded(item, newEventId(), ctx))
        : batch.items.map((item) => buildObjectUpserted(item, ctx))
    await deps.log.append(datasetId, records, [])
  }
  await new Projector(deps.log, deps.store).catchUp()
  return plan
}
