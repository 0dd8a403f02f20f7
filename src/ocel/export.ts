/**
 * OCEL 2.0 JSON export of one dataset's read models (docs/ocel.md#export;
 * README § Read models). `toOcelJson` is the pure mapping from read-model rows to the document;
 * `exportOcel` reads the rows page by page through the query port (ReadModelQuery) and applies it.
 */
import type { EventsAfter, ObjectHistory, ObjectKey, ReadModelQuery } from '../ports/read-model-query.js'
import { READ_LIMIT_MAX } from '../schemas/process.js'
import type { DeclaredType, DeclaredTypes, EventObjectRow, EventRow, ObjectChangeRow, ObjectRelationshipRow, ObjectRow } from '../schemas/read-models.js'
import type { OcelAttributeType, OcelEventStrict, OcelJsonStrict, OcelObjectStrict, OcelTypeDeclarationStrict } from './ocel-json.js'

/** The read-model fields of one dataset that an export needs (any order: the mapping sorts). */
export interface ExportRows {
  eventTypes: readonly { name: string }[]
  objectTypes: readonly { name: string }[]
  objects: readonly Pick<ObjectRow, 'object_id' | 'type' | 'external_id'>[]
  objectChanges: readonly Pick<ObjectChangeRow, 'object_id' | 'position' | 'time' | 'attributes'>[]
  events: readonly Pick<EventRow, 'event_id' | 'event_type' | 'timestamp' | 'end_timestamp' | 'properties' | 'position'>[]
  eventObjects: readonly Pick<EventObjectRow, 'event_id' | 'object_id' | 'qualifier'>[]
  /** O2O: from `object_id` to `target_object_id`. */
  objectRelationships: readonly Pick<ObjectRelationshipRow, 'object_id' | 'target_object_id' | 'qualifier'>[]
  /** The declared types (read model declared_types), used or not; absent: none. */
  declared?: DeclaredTypes
}

/** Counts of an exported document, for the one-line summary of `ocelog export`. */
export interface ExportSummary {
  events: number
  objects: number
  eventTypes: number
  objectTypes: number
  /** E2O relationships over all events. */
  relationships: number
  /** O2O relationships over all objects. */
  objectRelationships: number
}

/** The name of the event attribute that carries `end_timestamp`, unless the client used that name itself. */
export const END_TIMESTAMP_ATTRIBUTE = 'end_timestamp'
/** The fallback name when events of the type carry a property named `end_timestamp`. */
export const END_TIMESTAMP_FALLBACK = 'ocelog:end_timestamp'

/** Code-unit order: the same on every machine and locale. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

/**
 * An attribute value as OCEL 2.0 JSON writes it (a string): strings as they are, numbers with
 * `String` (e.g. `12.5`, `1e+21`), booleans as `true`/`false`, null as `''`, objects and arrays as
 * JSON text.
 */
export function ocelValue(value: unknown): string {
  if (typeof value === 'string') return value
  if (typeof value === 'number') return String(value)
  if (typeof value === 'boolean') return value ? 'true' : 'false'
  if (value === null || value === undefined) return ''
  return JSON.stringify(value)
}

type ValueKind = 'integer' | 'float' | 'boolean' | 'string' | 'time' | 'other'

function kindOf(value: unknown): ValueKind {
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'float'
  if (typeof value === 'boolean') return 'boolean'
  if (typeof value === 'string') return 'string'
  // null, objects and arrays: written as '' or JSON text, so only "string" describes them.
  return 'other'
}

/**
 * The OCEL attribute type of a set of value kinds: all integral numbers → integer, numbers → float,
 * all booleans → boolean, all times → time, anything else (strings, null, objects, arrays, a mix) → string.
 */
function typeOf(kinds: ReadonlySet<ValueKind>): OcelAttributeType {
  const only = (...allowed: ValueKind[]) => kinds.size > 0 && [...kinds].every((k) => allowed.includes(k))
  if (only('integer')) return 'integer'
  if (only('integer', 'float')) return 'float'
  if (only('boolean')) return 'boolean'
  if (only('time')) return 'time'
  return 'string'
}

/** Attribute declarations per event or object type: declared (POST /v1/types) or inferred from the values seen. */
class TypeDeclarations {
  private readonly types = new Map<string, Map<string, Set<ValueKind>>>()
  /** Declared attribute types by type, then attribute: preferred to the inferred ones. */
  private readonly declared = new Map<string, Map<string, OcelAttributeType>>()

  declare(type: string): Map<string, Set<ValueKind>> {
    let attributes = this.types.get(type)
    if (attributes === undefined) {
      attributes = new Map()
      this.types.set(type, attributes)
    }
    return attributes
  }

  see(type: string, attribute: string, kind: ValueKind): void {
    const attributes = this.declare(type)
    const kinds = attributes.get(attribute)
    if (kinds === undefined) attributes.set(attribute, new Set([kind]))
    else kinds.add(kind)
  }

  /** Declares `declared` (a declared type, used or not) with its attributes' types, which the list prefers to what values suggest. */
  declareWith(declared: DeclaredType): void {
    const attributes = this.declare(declared.name)
    const types = this.declared.get(declared.name) ?? new Map<string, OcelAttributeType>()
    for (const a of declared.attributes) {
      if (!attributes.has(a.name)) attributes.set(a.name, new Set())
      types.set(a.name, a.type)
    }
    this.declared.set(declared.name, types)
  }

  /** Types by name, their attributes by name: each attribute's declared type, else the one its values suggest. */
  list(): OcelTypeDeclarationStrict[] {
    return [...this.types.entries()]
      .sort(([a], [b]) => compare(a, b))
      .map(([name, attributes]) => ({
        name,
        attributes: [...attributes.entries()]
          .sort(([a], [b]) => compare(a, b))
          .map(([attribute, kinds]) => ({ name: attribute, type: this.declared.get(name)?.get(attribute) ?? typeOf(kinds) })),
      }))
  }
}

interface Identity {
  objectId: string
  type: string
  externalId: string
}

/**
 * OCEL object ids for Ocelog objects: the client's external id, or `type/id` for every object whose
 * external id another object type of the dataset uses too. Should `type/id` itself collide with an
 * external id (only possible with ids containing '/'), those objects fall back to Ocelog's object_id.
 */
function exportedIds(objects: readonly Identity[]): Map<string, string> {
  const owners = (ids: Map<string, string>) => {
    const count = new Map<string, number>()
    for (const id of ids.values()) count.set(id, (count.get(id) ?? 0) + 1)
    return count
  }
  const ids = new Map(objects.map((o) => [o.objectId, o.externalId]))
  const shared = owners(ids)
  for (const o of objects) if ((shared.get(o.externalId) ?? 0) > 1) ids.set(o.objectId, `${o.type}/${o.externalId}`)
  const after = owners(ids)
  for (const o of objects) {
    const id = ids.get(o.objectId)
    if (id !== undefined && (after.get(id) ?? 0) > 1) ids.set(o.objectId, o.objectId)
  }
  for (const [id, n] of owners(ids)) if (n > 1) throw new Error(`OCEL export: object id "${id}" would name ${String(n)} objects`)
  return ids
}

/**
 * OCEL relationships (E2O or O2O) per source (an event id or an object id): the target's exported id
 * and the qualifier sent, or `''` (OCEL requires one); each once, ordered by (objectId, qualifier).
 * Rows whose target has no exported id (not in the read models) are left out.
 */
function ocelLinks<R extends { qualifier: string | null }>(
  ids: ReadonlyMap<string, string>,
  rows: readonly R[],
  sourceOf: (row: R) => string,
  targetOf: (row: R) => string,
): Map<string, { objectId: string; qualifier: string }[]> {
  const bySource = new Map<string, Map<string, { objectId: string; qualifier: string }>>()
  for (const row of rows) {
    const objectId = ids.get(targetOf(row))
    if (objectId === undefined) continue
    const qualifier = row.qualifier ?? ''
    const links = bySource.get(sourceOf(row)) ?? new Map<string, { objectId: string; qualifier: string }>()
    links.set(JSON.stringify([objectId, qualifier]), { objectId, qualifier })
    bySource.set(sourceOf(row), links)
  }
  const sorted = (links: Iterable<{ objectId: string; qualifier: string }>) =>
    [...links].sort((a, b) => compare(a.objectId, b.objectId) || compare(a.qualifier, b.qualifier))
  return new Map([...bySource].map(([source, links]) => [source, sorted(links.values())]))
}

/**
 * Per event type, the attributes it declared with a type other than `time` (a dataset's declared
 * types): the end time is never written under such a name. An attribute declared `time` under the
 * end time's name (an exported log imported again) is where the end time goes.
 */
function declaredOtherThanTime(declared: DeclaredTypes | undefined): Map<string, string[]> {
  return new Map((declared?.event_types ?? []).map((t) => [t.name, t.attributes.filter((a) => a.type !== 'time').map((a) => a.name)]))
}

/** A name for the end_timestamp attribute that no property of the type uses. */
function endTimestampName(taken: ReadonlySet<string>): string {
  if (!taken.has(END_TIMESTAMP_ATTRIBUTE)) return END_TIMESTAMP_ATTRIBUTE
  let name = END_TIMESTAMP_FALLBACK
  for (let n = 2; taken.has(name); n++) name = `${END_TIMESTAMP_FALLBACK}:${String(n)}`
  return name
}

/**
 * Maps one dataset's read-model rows to an OCEL 2.0 JSON document (pure; README § Read models).
 *
 * - `eventTypes` / `objectTypes`: every type of the read models (and of the rows) and every declared
 *   type (docs/ocel.md#declared-types), used or not, by name. An attribute's type is its declared
 *   one; an attribute without a declaration gets one inferred from all values seen: all integral
 *   numbers → `integer`, numbers → `float`, booleans → `boolean`, anything else or a mix (null
 *   included) → `string`. A type without attributes has `attributes: []`.
 * - `events`: by (timestamp, position). `id` = event_id, `time` = timestamp (UTC ISO 8601 with ms),
 *   attributes = the event's properties as strings (see `ocelValue`). An event with an
 *   `end_timestamp` gets the attribute `end_timestamp` (type `time`), named `ocelog:end_timestamp`
 *   for every event of a type whose events carry a property called `end_timestamp`.
 *   `relationships` = the E2O rows: the exported object id and the qualifier sent, or `''` when
 *   none was sent (OCEL requires a qualifier); duplicates dropped, ordered by (objectId, qualifier).
 * - `objects`: by (type, id) as UTF-8 bytes (see compareUtf8). `id` = the client's external id, or `type/id` for all objects whose
 *   external id is shared by several object types of the dataset (E2O relationships use the same
 *   id). `attributes` = the attribute history from object_changes: one `{name, time, value}` per
 *   attribute per change, in log position order, each with the time its change took effect (an
 *   upsert's `timestamp`, an event's time for values sent inside it). `relationships` = the O2O
 *   relationships upserts asserted (README § O2O relationships and attribute times): the target's
 *   exported id and the qualifier sent, or `''`, ordered by (objectId, qualifier). Objects that
 *   merely share events are linked through those events (E2O), never exported as O2O.
 *
 * Rows that point at nothing (an object change or an E2O row of an unknown object or event) are
 * left out; the projector writes them together, so they do not occur in a consistent store.
 * @throws Error when two objects would get the same OCEL id (a bug, see exportedIds).
 */
export function toOcelJson(rows: ExportRows): OcelJsonStrict {
  const eventTypes = new TypeDeclarations()
  const objectTypes = new TypeDeclarations()
  for (const t of rows.eventTypes) eventTypes.declare(t.name)
  for (const t of rows.objectTypes) objectTypes.declare(t.name)
  for (const t of rows.declared?.event_types ?? []) eventTypes.declareWith(t)
  for (const t of rows.declared?.object_types ?? []) objectTypes.declareWith(t)

  const ids = exportedIds(rows.objects.map((o) => ({ objectId: o.object_id, type: o.type, externalId: o.external_id })))

  const propertyNames = new Map<string, Set<string>>()
  for (const e of rows.events) {
    const names = propertyNames.get(e.event_type) ?? new Set<string>()
    for (const name of Object.keys(e.properties)) names.add(name)
    propertyNames.set(e.event_type, names)
  }
  for (const [type, names] of declaredOtherThanTime(rows.declared)) propertyNames.set(type, new Set([...(propertyNames.get(type) ?? []), ...names]))
  const endName = new Map([...propertyNames].map(([type, names]) => [type, endTimestampName(names)]))

  const relationships = ocelLinks(
    ids,
    rows.eventObjects,
    (l) => l.event_id,
    (l) => l.object_id,
  )

  const events: OcelEventStrict[] = [...rows.events]
    .sort((a, b) => compare(a.timestamp, b.timestamp) || a.position - b.position)
    .map((e) => {
      eventTypes.declare(e.event_type)
      const attributes = Object.entries(e.properties).map(([name, value]) => {
        eventTypes.see(e.event_type, name, kindOf(value))
        return { name, value: ocelValue(value) }
      })
      if (e.end_timestamp !== null) {
        const name = endName.get(e.event_type) ?? END_TIMESTAMP_ATTRIBUTE
        eventTypes.see(e.event_type, name, 'time')
        attributes.push({ name, value: e.end_timestamp })
      }
      const links = relationships.get(e.event_id) ?? []
      return { id: e.event_id, type: e.event_type, time: e.timestamp, attributes, relationships: links }
    })

  const changes = new Map<string, ExportRows['objectChanges'][number][]>()
  for (const c of rows.objectChanges) {
    const list = changes.get(c.object_id) ?? []
    list.push(c)
    changes.set(c.object_id, list)
  }

  const o2o = ocelLinks(
    ids,
    rows.objectRelationships,
    (r) => r.object_id,
    (r) => r.target_object_id,
  )

  const objects: OcelObjectStrict[] = rows.objects
    .map((o) => {
      objectTypes.declare(o.type)
      const history = [...(changes.get(o.object_id) ?? [])].sort((a, b) => a.position - b.position)
      const attributes = history.flatMap((c) =>
        Object.entries(c.attributes).map(([name, value]) => {
          objectTypes.see(o.type, name, kindOf(value))
          return { name, time: c.time, value: ocelValue(value) }
        }),
      )
      const links = o2o.get(o.object_id) ?? []
      return { id: ids.get(o.object_id) ?? o.object_id, type: o.type, attributes, relationships: links }
    })
    .sort((a, b) => compareUtf8(a.type, b.type) || compareUtf8(a.id, b.id))

  return { eventTypes: eventTypes.list(), objectTypes: objectTypes.list(), events, objects }
}

/**
 * Order of UTF-8 bytes (the engines' binary order of text, in which the read models page objects):
 * JavaScript's code-unit order except that a surrogate (a character beyond U+FFFF) sorts after
 * U+E000–U+FFFF, as its UTF-8 bytes do.
 */
export function compareUtf8(a: string, b: string): number {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i)
    const y = b.charCodeAt(i)
    if (x === y) continue
    const sx = x >= 0xd800 && x <= 0xdfff
    const sy = y >= 0xd800 && y <= 0xdfff
    if (sx !== sy && (sx ? y : x) >= 0xe000) return sx ? 1 : -1
    return x - y
  }
  return a.length - b.length
}

/** One E2O or O2O link of an item as the read models give it: the target's object_id, type and own id. */
interface ReadLink {
  object_id: string
  type: string
  id: string
  qualifier: string | null
}

/**
 * The item's OCEL relationships (see `ocelLinks`) and, beside them, each target's object type
 * (the XML form names it on every reference).
 */
function itemLinks(links: readonly ReadLink[], idOf: (objectId: string, id: string) => string): { relationships: OcelRelationship[]; types: string[] } {
  const unique = new Map<string, OcelRelationship & { type: string }>()
  for (const l of links) {
    const objectId = idOf(l.object_id, l.id)
    const qualifier = l.qualifier ?? ''
    // The id's length first, so that the key names one (id, qualifier) pair whatever characters they hold.
    unique.set(`${String(objectId.length)}:${objectId}${qualifier}`, { objectId, qualifier, type: l.type })
  }
  const sorted = [...unique.values()].sort((a, b) => compare(a.objectId, b.objectId) || compare(a.qualifier, b.qualifier))
  return { relationships: sorted.map((r) => ({ objectId: r.objectId, qualifier: r.qualifier })), types: sorted.map((r) => r.type) }
}

type OcelRelationship = OcelEventStrict['relationships'][number]

/** Where a streamed export puts its items, in document order: every event first, then every object. */
export interface OcelItemSink {
  /** @param targetTypes the object type of each of `event.relationships`, in the same order. */
  event(event: OcelEventStrict, targetTypes: readonly string[]): Promise<void> | void
  /** @param targetTypes the object type of each of `object.relationships`, in the same order. */
  object(object: OcelObjectStrict, targetTypes: readonly string[]): Promise<void> | void
}

/** What a streamed export knows once every item has passed: the type declarations and the counts. */
export interface StreamedExport {
  eventTypes: OcelTypeDeclarationStrict[]
  objectTypes: OcelTypeDeclarationStrict[]
  summary: ExportSummary
}

/**
 * The OCEL ids of the objects whose id in the document is not their own id (see exportedIds): those
 * whose own id another object type uses too, and those whose own id equals one of their `type/id`.
 * Found by a grouping in the engine (`sharedObjectIds`) and two look-ups, so memory grows with the
 * number of such objects only (none in most datasets).
 * @returns object_id → OCEL id, for those objects only.
 */
export async function exportIdExceptions(query: ReadModelQuery, datasetId: string): Promise<Map<string, string>> {
  const shared = await query.sharedObjectIds(datasetId)
  if (shared.length === 0) return new Map()
  const sharing = await query.objectsWithIds(datasetId, shared)
  const colliding = await query.objectsWithIds(datasetId, [...new Set(sharing.map((o) => `${o.type}/${o.id}`))])
  const involved = new Map([...sharing, ...colliding].map((o) => [o.object_id, o]))
  const ids = exportedIds([...involved.values()].map((o) => ({ objectId: o.object_id, type: o.type, externalId: o.id })))
  return new Map([...ids].filter(([objectId, id]) => involved.get(objectId)?.id !== id))
}

/**
 * Exports dataset `datasetId` from the read models as a stream of OCEL 2.0 items (the mapping of
 * `toOcelJson`), reading through the query port in pages of READ_LIMIT_MAX and handing each item
 * to `sink` as it is mapped, so memory does not grow with the dataset: events with their E2O links
 * in (timestamp, position) order, then objects with their attribute histories and O2O by (type, id)
 * (UTF-8 byte order; the few objects written `type/id` are read first and merged in at their place).
 * The type declarations, which depend on every value, are returned at the end, with every declared
 * type (used or not) and the declared attribute types preferred; the names of the event attributes
 * that carry `end_timestamp` come first from the event types' attribute names and declarations.
 * Reads what the read models hold now; objects are read after events and are never removed, so
 * every object an exported event names is in the document. An unknown dataset gives no item.
 * @returns the declarations (eventTypes, objectTypes) and the counts of what went to `sink`.
 * @throws the port's and the sink's errors; Error when two objects would get the same OCEL id (a bug).
 */
export async function streamOcel(query: ReadModelQuery, datasetId: string, sink: OcelItemSink): Promise<StreamedExport> {
  const eventTypes = new TypeDeclarations()
  const objectTypes = new TypeDeclarations()
  const summary: ExportSummary = { events: 0, objects: 0, eventTypes: 0, objectTypes: 0, relationships: 0, objectRelationships: 0 }
  const declaredEvents = await query.eventTypes(datasetId)
  const declared = await query.declaredTypes(datasetId)
  // The names each event type's values use, and its attributes declared other than `time`: the end time takes none of them.
  const taken = new Map(declaredEvents.map((t) => [t.name, new Set(t.attributes.map((a) => a.name))]))
  for (const [type, names] of declaredOtherThanTime(declared)) taken.set(type, new Set([...(taken.get(type) ?? []), ...names]))
  const endName = new Map([...taken].map(([type, names]) => [type, endTimestampName(names)]))
  const exceptions = await exportIdExceptions(query, datasetId)
  const idOf = (objectId: string, id: string) => exceptions.get(objectId) ?? id

  for (let after: EventsAfter | null | undefined; after !== null; ) {
    // Every page is read, so no page needs the count of them all (a scan of the dataset's events per page).
    const page = await query.events(datasetId, { limit: READ_LIMIT_MAX, count: false, ...(after === undefined ? {} : { after }) })
    for (const e of page.events) {
      eventTypes.declare(e.event_type)
      const attributes = Object.entries(e.properties).map(([name, value]) => {
        eventTypes.see(e.event_type, name, kindOf(value))
        return { name, value: ocelValue(value) }
      })
      if (e.end_timestamp !== null) {
        const name = endName.get(e.event_type) ?? endTimestampName(new Set(Object.keys(e.properties)))
        eventTypes.see(e.event_type, name, 'time')
        attributes.push({ name, value: e.end_timestamp })
      }
      const links = itemLinks(e.objects, idOf)
      summary.events += 1
      summary.relationships += links.relationships.length
      await sink.event({ id: e.event_id, type: e.event_type, time: e.timestamp, attributes, relationships: links.relationships }, links.types)
    }
    after = page.next
  }

  const toObject = (o: ObjectHistory) => {
    objectTypes.declare(o.type)
    const attributes = o.changes.flatMap((c) =>
      Object.entries(c.attributes).map(([name, value]) => {
        objectTypes.see(o.type, name, kindOf(value))
        return { name, time: c.time, value: ocelValue(value) }
      }),
    )
    const links = itemLinks(o.relationships, idOf)
    return { object: { id: idOf(o.object_id, o.id), type: o.type, attributes, relationships: links.relationships }, types: links.types }
  }
  const byKey = (a: { type: string; id: string }, b: { type: string; id: string }) => compareUtf8(a.type, b.type) || compareUtf8(a.id, b.id)
  // The objects written as type/id (few): read first, then merged into the stream at their place.
  const renamed: ReturnType<typeof toObject>[] = []
  const renamedIds = [...exceptions.keys()]
  for (let after: ObjectKey | null | undefined; after !== null && renamedIds.length > 0; ) {
    const page = await query.objectHistories(datasetId, { limit: READ_LIMIT_MAX, objectIds: renamedIds, ...(after === undefined ? {} : { after }) })
    for (const o of page.objects) renamed.push(toObject(o))
    after = page.next
  }
  renamed.sort((a, b) => byKey(a.object, b.object))
  let next = 0
  const emit = async (item: ReturnType<typeof toObject>) => {
    summary.objects += 1
    summary.objectRelationships += item.object.relationships.length
    await sink.object(item.object, item.types)
  }
  for (let after: ObjectKey | null | undefined; after !== null; ) {
    const page = await query.objectHistories(datasetId, { limit: READ_LIMIT_MAX, ...(after === undefined ? {} : { after }) })
    for (const o of page.objects) {
      if (exceptions.has(o.object_id)) continue
      for (let r = renamed[next]; r !== undefined && byKey(r.object, o) < 0; r = renamed[++next]) await emit(r)
      await emit(toObject(o))
    }
    after = page.next
  }
  for (let r = renamed[next]; r !== undefined; r = renamed[++next]) await emit(r)

  for (const t of declaredEvents) eventTypes.declare(t.name)
  for (const t of await query.objectTypes(datasetId)) objectTypes.declare(t.name)
  for (const t of declared.event_types) eventTypes.declareWith(t)
  for (const t of declared.object_types) objectTypes.declareWith(t)
  const declarations = { eventTypes: eventTypes.list(), objectTypes: objectTypes.list() }
  summary.eventTypes = declarations.eventTypes.length
  summary.objectTypes = declarations.objectTypes.length
  return { ...declarations, summary }
}

/**
 * Exports dataset `datasetId` from the read models as one OCEL 2.0 JSON document in memory (the
 * items of `streamOcel`, collected). For tests and small datasets; `ocelog export` streams instead
 * (src/ocel/export-writer.ts).
 */
export async function exportOcel(query: ReadModelQuery, datasetId: string): Promise<OcelJsonStrict> {
  const events: OcelEventStrict[] = []
  const objects: OcelObjectStrict[] = []
  const { eventTypes, objectTypes } = await streamOcel(query, datasetId, {
    event: (e) => void events.push(e),
    object: (o) => void objects.push(o),
  })
  return { eventTypes, objectTypes, events, objects }
}

/** Counts of a document: events, objects, declared event/object types, E2O and O2O relationships. */
export function summarize(doc: OcelJsonStrict): ExportSummary {
  return {
    events: doc.events.length,
    objects: doc.objects.length,
    eventTypes: doc.eventTypes.length,
    objectTypes: doc.objectTypes.length,
    relationships: doc.events.reduce((n, e) => n + e.relationships.length, 0),
    objectRelationships: doc.objects.reduce((n, o) => n + (o.relationships?.length ?? 0), 0),
  }
}
