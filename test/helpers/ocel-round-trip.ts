/**
 * Round-trip check of an import (pure): what `ocelog export` of the dataset must give back after
 * `ocelog import` of a log into an empty dataset, and where an export differs from it.
 *
 * Both sides are reduced to one view: events per type, objects per type, E2O pairs, every event as
 * (type, time with ms, attributes, E2O (object type, id, qualifier)) counted as a multiset, the
 * final attribute values of every object (type, id), its attribute history (every value with the
 * time it took effect), and its O2O relationships (target type, id, qualifier). Values are compared as OCEL JSON writes them
 * (`ocelValue` of src/ocel/export.ts: numbers and booleans as text). The exported object id is
 * `type/id` when several types share an id; the view undoes that.
 *
 * `expectedView` applies the import's rules on its own (it does not use the plan), so a mapping
 * bug in the plan shows up as a difference: objects the log references but never defines get the
 * placeholder type (`--unknown-object-type`) and no attributes, duplicated (object, qualifier)
 * pairs count once, events with no object or with more than 50 are left out; so are repeated O2O
 * (target, qualifier) pairs of one object, and of two values of one attribute at one time, the
 * later in the file.
 */
import { ocelValue } from '../../src/ocel/export.js'
import { UNDEFINED_OBJECT_TYPE } from '../../src/ocel/import/plan.js'
import type { OcelJsonStrict } from '../../src/ocel/ocel-json.js'
import type { OcelLog, OcelObject } from '../../src/ocel/import/model.js'

export interface RoundTripView {
  eventsPerType: Record<string, number>
  objectsPerType: Record<string, number>
  e2o: number
  /** Canonical event → how many events have exactly it. */
  events: Map<string, number>
  /** `type␀id` → final attribute values. */
  objects: Map<string, Record<string, string>>
  /** `type␀id` → its attribute history: `[name, time (ISO, ms), value]`, sorted. */
  history: Map<string, string[]>
  /** `type␀id` → its O2O relationships: `[target type, target id, qualifier or '']`, sorted. */
  o2o: Map<string, string[]>
  /** O2O relationships over all objects. */
  o2oCount: number
}

const SEP = '\u0000'
const MAX_OBJECTS_PER_EVENT = 50

function bump(counts: Record<string, number>, key: string): void {
  counts[key] = (counts[key] ?? 0) + 1
}

function eventKey(type: string, time: string, attributes: [string, string][], objects: [string, string, string][]): string {
  const attrs = [...attributes].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
  const links = objects.map((o) => JSON.stringify(o)).sort()
  return JSON.stringify([type, time, attrs, links])
}

/** The view an export must match after importing `log` with `--unknown-object-type unknownObjectType` (see module comment). */
export function expectedView(log: OcelLog, unknownObjectType = UNDEFINED_OBJECT_TYPE): RoundTripView {
  const view = emptyView()
  const byId = new Map<string, OcelObject>()
  for (const o of log.objects) if (!byId.has(o.id)) byId.set(o.id, o)
  const undefinedTargets = new Set<string>()
  for (const o of log.objects) {
    const key = o.type + SEP + o.id
    if (!view.objects.has(key)) bump(view.objectsPerType, o.type)
    const latest = new Map<string, { time: number; value: unknown }>()
    const atTime = new Map<string, string[]>()
    for (const a of o.attributes) {
      const prior = latest.get(a.name)
      if (prior === undefined || a.time >= prior.time) latest.set(a.name, { time: a.time, value: a.value })
      const time = new Date(a.time).toISOString()
      atTime.set(JSON.stringify([a.name, time]), [a.name, time, ocelValue(a.value)])
    }
    view.objects.set(key, Object.fromEntries([...latest].map(([name, v]) => [name, ocelValue(v.value)])))
    view.history.set(key, [...atTime.values()].map((h) => JSON.stringify(h)).sort())
    const links = new Set<string>()
    for (const r of o.relationships) {
      const target = byId.get(r.objectId)
      if (target === undefined) undefinedTargets.add(r.objectId)
      links.add(JSON.stringify([target?.type ?? unknownObjectType, r.objectId, r.qualifier ?? '']))
    }
    view.o2o.set(key, [...links].sort())
    view.o2oCount += links.size
  }
  for (const id of undefinedTargets) {
    const key = unknownObjectType + SEP + id
    if (view.objects.has(key)) continue
    bump(view.objectsPerType, unknownObjectType)
    view.objects.set(key, {})
  }
  for (const e of log.events) {
    const links = new Map<string, [string, string, string]>()
    for (const r of e.relationships) {
      const o = byId.get(r.objectId) ?? { type: unknownObjectType, id: r.objectId }
      const link: [string, string, string] = [o.type, o.id, r.qualifier ?? '']
      links.set(JSON.stringify(link), link)
    }
    if (links.size === 0 || links.size > MAX_OBJECTS_PER_EVENT) continue
    for (const [type, id] of links.values()) {
      if (byId.has(id) || view.objects.has(type + SEP + id)) continue
      bump(view.objectsPerType, type)
      view.objects.set(type + SEP + id, {})
    }
    bump(view.eventsPerType, e.type)
    view.e2o += links.size
    const attributes = Object.entries(e.attributes).map(([name, value]): [string, string] => [name, ocelValue(value)])
    const key = eventKey(e.type, new Date(e.time).toISOString(), attributes, [...links.values()])
    view.events.set(key, (view.events.get(key) ?? 0) + 1)
  }
  return view
}

/** The OCEL id → (type, id) of every exported object, undoing `type/id` for ids several types share. */
function exportedIdentities(doc: OcelJsonStrict): Map<string, { type: string; id: string }> {
  const typesByStripped = new Map<string, Set<string>>()
  for (const o of doc.objects) {
    if (!o.id.startsWith(`${o.type}/`)) continue
    const stripped = o.id.slice(o.type.length + 1)
    const types = typesByStripped.get(stripped) ?? new Set<string>()
    types.add(o.type)
    typesByStripped.set(stripped, types)
  }
  const out = new Map<string, { type: string; id: string }>()
  for (const o of doc.objects) {
    const stripped = o.id.startsWith(`${o.type}/`) ? o.id.slice(o.type.length + 1) : null
    const shared = stripped !== null && (typesByStripped.get(stripped)?.size ?? 0) > 1
    out.set(o.id, { type: o.type, id: shared && stripped !== null ? stripped : o.id })
  }
  return out
}

function emptyView(): RoundTripView {
  return { eventsPerType: {}, objectsPerType: {}, e2o: 0, events: new Map(), objects: new Map(), history: new Map(), o2o: new Map(), o2oCount: 0 }
}

/** The view of an exported OCEL 2.0 JSON document. */
export function exportedView(doc: OcelJsonStrict): RoundTripView {
  const view = emptyView()
  const identities = exportedIdentities(doc)
  for (const o of doc.objects) {
    const who = identities.get(o.id) ?? { type: o.type, id: o.id }
    const key = who.type + SEP + who.id
    bump(view.objectsPerType, o.type)
    const final: Record<string, string> = {}
    for (const a of o.attributes) final[a.name] = a.value
    view.objects.set(key, final)
    view.history.set(key, o.attributes.map((a) => JSON.stringify([a.name, new Date(a.time).toISOString(), a.value])).sort())
    const links = (o.relationships ?? []).map((r) => {
      const target = identities.get(r.objectId) ?? { type: '?', id: r.objectId }
      return JSON.stringify([target.type, target.id, r.qualifier])
    })
    view.o2o.set(key, links.sort())
    view.o2oCount += links.length
  }
  for (const e of doc.events) {
    bump(view.eventsPerType, e.type)
    view.e2o += e.relationships.length
    const links = e.relationships.map((r): [string, string, string] => {
      const who = identities.get(r.objectId) ?? { type: '?', id: r.objectId }
      return [who.type, who.id, r.qualifier]
    })
    const key = eventKey(
      e.type,
      e.time,
      e.attributes.map((a): [string, string] => [a.name, a.value]),
      links,
    )
    view.events.set(key, (view.events.get(key) ?? 0) + 1)
  }
  return view
}

function diffCounts(what: string, expected: Record<string, number>, actual: Record<string, number>, out: string[]): void {
  for (const k of new Set([...Object.keys(expected), ...Object.keys(actual)])) {
    if ((expected[k] ?? 0) !== (actual[k] ?? 0)) out.push(`${what} "${k}": expected ${String(expected[k] ?? 0)}, exported ${String(actual[k] ?? 0)}`)
  }
}

/**
 * Differences between the expected and the exported view, one line each (at most `limit` per part).
 * @returns [] when the export gives back what was imported.
 */
export function diffViews(expected: RoundTripView, actual: RoundTripView, limit = 10): string[] {
  const out: string[] = []
  diffCounts('events of type', expected.eventsPerType, actual.eventsPerType, out)
  diffCounts('objects of type', expected.objectsPerType, actual.objectsPerType, out)
  if (expected.e2o !== actual.e2o) out.push(`E2O pairs: expected ${String(expected.e2o)}, exported ${String(actual.e2o)}`)
  if (expected.o2oCount !== actual.o2oCount) out.push(`O2O relationships: expected ${String(expected.o2oCount)}, exported ${String(actual.o2oCount)}`)
  const events: string[] = []
  for (const k of new Set([...expected.events.keys(), ...actual.events.keys()])) {
    const e = expected.events.get(k) ?? 0
    const a = actual.events.get(k) ?? 0
    if (e !== a) events.push(`event ${k}: expected ${String(e)}×, exported ${String(a)}×`)
  }
  out.push(...events.slice(0, limit))
  if (events.length > limit) out.push(`… ${String(events.length - limit)} more event differences`)
  const objects: string[] = []
  for (const k of new Set([...expected.objects.keys(), ...actual.objects.keys()])) {
    const e = expected.objects.get(k)
    const a = actual.objects.get(k)
    const name = k.replace(SEP, '/')
    if (e === undefined || a === undefined) objects.push(`object ${name}: ${e === undefined ? 'not expected' : 'not exported'}`)
    else if (JSON.stringify(Object.entries(e).sort()) !== JSON.stringify(Object.entries(a).sort()))
      objects.push(`object ${name}: expected ${JSON.stringify(e)}, exported ${JSON.stringify(a)}`)
    for (const part of ['history', 'o2o'] as const) {
      const eh = JSON.stringify(expected[part].get(k) ?? [])
      const ah = JSON.stringify(actual[part].get(k) ?? [])
      if (eh !== ah) objects.push(`object ${name} ${part}: expected ${eh}, exported ${ah}`)
    }
  }
  out.push(...objects.slice(0, limit))
  if (objects.length > limit) out.push(`… ${String(objects.length - limit)} more object differences`)
  return out
}
