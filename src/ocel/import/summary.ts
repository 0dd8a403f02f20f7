/**
 * The summary of an import (`ocelog import`, printed at the end; `--json` prints the object):
 * what the log holds, what was sent, what failed and why, what was retried, what was skipped and
 * why, the time-zone assumption, elapsed time and throughput. Pure.
 */
import type { RetryCause } from '@ocelog/client'
import type { OcelFormat, OcelLog, ReadNotes, Tally } from './model.js'
import type { ImportPlan } from './plan.js'
import type { RunResult } from './run.js'
import type { DeclarationOutcome } from './declarations.js'
import { joinKey } from '../../core/keys.js'

/** What each skip or unreadable cause means, for people (keys of `skipped`). */
export const SKIP_CAUSES: Record<string, string> = {
  o2o_duplicate: 'O2O relationships repeated with the same target and qualifier in one object; sent once',
  e2o_duplicate: 'E2O references repeated with the same qualifier in one event; sent once',
  event_without_objects: 'events left with no object (the API needs 1 to 50)',
  event_over_50_objects: 'events with more than 50 objects (the API rejects them)',
  end_timestamp_unusable: 'event end_timestamp attributes that are not a date-time with a zone at or after the event’s time; kept as properties',
  object_attribute_same_time: 'object attribute values set twice at the same time; the later one in the file was sent',
  event_unreadable: 'events without a readable id or type',
  event_unreadable_time: 'events with an unreadable time',
  event_without_row: 'events without a row in their type table (SQLite), so without a time',
  e2o_unreadable: 'E2O relationships without a readable object id',
  e2o_unknown_event: 'E2O rows of events not in the event table (SQLite)',
  o2o_unreadable: 'O2O relationships without a readable object id',
  object_unreadable: 'objects without a readable id or type',
  object_attribute_unreadable: 'object attribute values without a readable name',
  object_attribute_unreadable_time: 'object attribute values with an unreadable time',
  object_attribute_unknown_object: 'object attribute rows of objects not in the object table (SQLite)',
  event_declaration_unreadable: 'event type declarations without a readable name',
  object_declaration_unreadable: 'object type declarations without a readable name',
}

export interface FailureGroup {
  kind: 'event' | 'object'
  reason: string
  count: number
  /** Up to 5 sources: the log's event ids, or `<object id> @ <time>`. */
  examples: string[]
}

export interface ImportSummary {
  file: string
  format: OcelFormat
  dataset_id: string
  /** Timestamps without a zone were read in `zone`. */
  timezone: { zone: string; naive_timestamps: number; truncated_to_ms: number }
  log: {
    events: number
    objects: number
    event_types: { declared: number; used: number }
    object_types: { declared: number; used: number }
    e2o: number
    o2o: number
    object_attribute_values: number
  }
  /** The log's type declarations, used or not, sent first (POST /v1/types; docs/ocel.md#declared-types). */
  declared: DeclarationOutcome
  /** `o2o`: O2O relationships in the accepted upserts. */
  sent: { events: number; object_upserts: number; objects: number; o2o: number }
  /** Of `sent`, the items the dataset already held under their idempotency keys (a re-run, or the rest of a killed import): recorded once. */
  already_recorded: { events: number; object_upserts: number }
  /**
   * Objects the log references but never defines: sent with type `type` (`--unknown-object-type`),
   * created by the service on first reference; `events` = the sent events that name at least one.
   */
  undefined_objects: { type: string; objects: number; events: number }
  failed: { events: number; object_upserts: number; reasons: FailureGroup[] }
  retried: { requests: number } & Record<RetryCause, number>
  /** Left out by cause (see SKIP_CAUSES), from reading and from planning. */
  skipped: Record<string, Tally & { description: string }>
  requests: number
  batches: number
  elapsed_ms: number
  /** Events accepted per second of elapsed time. */
  events_per_second: number
  /** Why the import stopped early; null when every batch was sent. */
  aborted: string | null
}

/** `Event 3: /objects/12/type: …` → `/objects/*\/type: …`: one reason per rule, not per item. */
export function reasonKey(reason: string): string {
  return reason.replace(/^(?:Event|Object) \d+: /, '').replace(/\/\d+(?=\/|:|$)/g, '/*')
}

function groupFailures(run: RunResult): FailureGroup[] {
  const groups = new Map<string, FailureGroup>()
  for (const f of run.failures) {
    const reason = reasonKey(f.reason)
    const key = joinKey(f.kind, reason)
    const g = groups.get(key) ?? { kind: f.kind, reason, count: 0, examples: [] }
    g.count += 1
    if (g.examples.length < 5) g.examples.push(f.source)
    groups.set(key, g)
  }
  return [...groups.values()].sort((a, b) => b.count - a.count)
}

/** What the summary says of the log as read (counted from an OcelLog by logCounts, or while staging). */
export interface LogCounts {
  format: OcelFormat
  notes: ReadNotes
  events: number
  objects: number
  eventTypes: { declared: number; used: number }
  objectTypes: { declared: number; used: number }
  e2o: number
  o2o: number
  objectAttributeValues: number
}

/** The counts of a log held in memory. */
export function logCounts(log: OcelLog): LogCounts {
  return {
    format: log.format,
    notes: log.notes,
    events: log.events.length,
    objects: log.objects.length,
    eventTypes: { declared: log.eventTypes.length, used: new Set(log.events.map((e) => e.type)).size },
    objectTypes: { declared: log.objectTypes.length, used: new Set(log.objects.map((o) => o.type)).size },
    e2o: log.events.reduce((n, e) => n + e.relationships.length, 0),
    o2o: log.objects.reduce((n, o) => n + o.relationships.length, 0),
    objectAttributeValues: log.objects.reduce((n, o) => n + o.attributes.length, 0),
  }
}

export interface SummaryInput {
  file: string
  datasetId: string
  log: LogCounts
  /** Of the plan: the undefined objects and the skips (an ImportPlan or a StagedPlan). */
  plan: Pick<ImportPlan, 'undefinedObjects' | 'skipped'>
  run: RunResult
  /** What sending the declarations did; absent: none were sent. */
  declared?: DeclarationOutcome
  retries: Record<RetryCause, number>
  elapsedMs: number
}

/** Builds the summary of one import. */
export function summarize(input: SummaryInput): ImportSummary {
  const { log, plan, run } = input
  const skipped: ImportSummary['skipped'] = {}
  for (const [cause, t] of [...Object.entries(log.notes.unreadable), ...Object.entries(plan.skipped)]) {
    const prior = skipped[cause]
    skipped[cause] = {
      count: (prior?.count ?? 0) + t.count,
      examples: [...(prior?.examples ?? []), ...t.examples].slice(0, 5),
      description: SKIP_CAUSES[cause] ?? cause,
    }
  }
  const retriedRequests = Object.values(input.retries).reduce((a, b) => a + b, 0)
  return {
    file: input.file,
    format: log.format,
    dataset_id: input.datasetId,
    timezone: { zone: log.notes.timezone, naive_timestamps: log.notes.naiveTimestamps, truncated_to_ms: log.notes.truncatedTimestamps },
    log: {
      events: log.events,
      objects: log.objects,
      event_types: log.eventTypes,
      object_types: log.objectTypes,
      e2o: log.e2o,
      o2o: log.o2o,
      object_attribute_values: log.objectAttributeValues,
    },
    declared: input.declared ?? { event_types: 0, object_types: 0, requests: 0, already_recorded: 0, left_out: [], failed: null },
    sent: { events: run.events.accepted, object_upserts: run.upserts.accepted, objects: run.objectsAccepted, o2o: run.relationshipsAccepted },
    already_recorded: { events: run.events.alreadyRecorded, object_upserts: run.upserts.alreadyRecorded },
    undefined_objects: plan.undefinedObjects,
    failed: { events: run.events.failed, object_upserts: run.upserts.failed, reasons: groupFailures(run) },
    retried: { requests: retriedRequests, ...input.retries },
    skipped,
    requests: run.requests,
    batches: run.batches,
    elapsed_ms: Math.round(input.elapsedMs),
    events_per_second: input.elapsedMs > 0 ? Math.round((run.events.accepted / input.elapsedMs) * 1000) : 0,
    aborted: run.aborted,
  }
}

const n = (x: number) => x.toLocaleString('en-US')

const FORMAT_NAMES: Record<OcelFormat, string> = { json: 'OCEL 2.0 JSON', sqlite: 'OCEL 2.0 SQLite', xml: 'OCEL 2.0 XML' }

/** The summary as lines for a person. */
export function formatSummary(s: ImportSummary): string {
  const lines: string[] = []
  const pad = (label: string) => `  ${label.padEnd(12)}`
  const clean = s.failed.events + s.failed.object_upserts === 0 && s.aborted === null
  lines.push(
    `${clean ? 'Imported' : s.aborted === null ? 'Imported with failures' : 'Import stopped'}: ${s.file} (${FORMAT_NAMES[s.format]}) into dataset ${s.dataset_id}`,
  )
  lines.push(
    `${pad('log')}${n(s.log.events)} events (${String(s.log.event_types.used)} of ${String(s.log.event_types.declared)} declared types used), ` +
      `${n(s.log.objects)} objects (${String(s.log.object_types.used)} of ${String(s.log.object_types.declared)} types), ` +
      `${n(s.log.e2o)} E2O, ${n(s.log.o2o)} O2O, ${n(s.log.object_attribute_values)} object attribute values`,
  )
  const d = s.declared
  if (d.requests > 0 || d.left_out.length > 0) {
    lines.push(
      `${pad('declared')}${String(d.event_types)} event types, ${String(d.object_types)} object types with their attributes` +
        (d.already_recorded > 0 ? ` (${String(d.already_recorded)} of ${String(d.requests)} requests already recorded)` : '') +
        (d.failed === null ? '' : `; not all recorded: ${d.failed}`) +
        (d.left_out.length === 0 ? '' : `; left out (names the API refuses): ${d.left_out.slice(0, 5).join(', ')}`),
    )
  }
  lines.push(`${pad('sent')}${n(s.sent.events)} events, ${n(s.sent.object_upserts)} object upserts (${n(s.sent.objects)} objects, ${n(s.sent.o2o)} O2O)`)
  const already = s.already_recorded.events + s.already_recorded.object_upserts
  if (already > 0) {
    lines.push(
      `${pad('already')}already recorded: ${n(already)} (${n(s.already_recorded.events)} events, ${n(s.already_recorded.object_upserts)} object upserts), ` +
        'found by their idempotency keys and not recorded again',
    )
  }
  if (s.undefined_objects.objects > 0) {
    lines.push(
      `${pad('undefined')}${n(s.undefined_objects.objects)} objects the log references but never defines, sent as type "${s.undefined_objects.type}" ` +
        `(--unknown-object-type), named by ${n(s.undefined_objects.events)} events`,
    )
  }
  const failed = s.failed.events + s.failed.object_upserts
  lines.push(`${pad('failed')}${failed === 0 ? 'none' : `${n(s.failed.events)} events, ${n(s.failed.object_upserts)} object upserts`}`)
  for (const g of s.failed.reasons.slice(0, 10)) {
    lines.push(`${pad('')}  ${n(g.count)} ${g.kind === 'event' ? 'event(s)' : 'upsert(s)'}: ${g.reason} (e.g. ${g.examples.join(', ')})`)
  }
  if (s.failed.reasons.length > 10) lines.push(`${pad('')}  … ${String(s.failed.reasons.length - 10)} more reasons (see --json)`)
  const causes = (['rate-limited', 'network', 'timeout', 'server-error'] as const).filter((c) => s.retried[c] > 0).map((c) => `${c} ${n(s.retried[c])}`)
  lines.push(`${pad('retried')}${s.retried.requests === 0 ? 'none' : `${n(s.retried.requests)} requests (${causes.join(', ')})`}`)
  const skips = Object.entries(s.skipped)
  if (skips.length === 0) lines.push(`${pad('skipped')}nothing`)
  for (const [i, [, t]] of skips.entries()) lines.push(`${pad(i === 0 ? 'skipped' : '')}${n(t.count)} ${t.description} (e.g. ${t.examples.join(', ')})`)
  lines.push(
    `${pad('timestamps')}${n(s.timezone.naive_timestamps)} without a time zone, read as ${s.timezone.zone}${s.timezone.naive_timestamps > 0 ? ' (--timezone)' : ''}` +
      (s.timezone.truncated_to_ms > 0 ? `; ${n(s.timezone.truncated_to_ms)} cut to milliseconds` : ''),
  )
  const seconds = s.elapsed_ms / 1000
  lines.push(
    `${pad('throughput')}${n(s.sent.events)} events in ${seconds.toFixed(1)} s = ${n(s.events_per_second)} events/s (${n(s.requests)} requests, ${n(s.batches)} batches)`,
  )
  if (s.aborted !== null) lines.push(`${pad('stopped')}${s.aborted}`)
  return `${lines.join('\n')}\n`
}
