/**
 * The normalized in-memory form of an OCEL 2.0 log that every reader (JSON, SQLite, XML) produces
 * and the import plan consumes. Ids and qualifiers are strings, times are ms since the epoch (UTC),
 * and what a reader could not read is counted in `notes` instead of being dropped silently.
 */

/** An attribute value as read: any JSON value (strings, numbers, booleans, null in practice). */
export type AttributeValue = unknown

/**
 * Sets attribute `name` of `target` to `value` as an own, enumerable property, whatever the name:
 * `target[name] = value` would set the object's prototype for `__proto__` instead, and the
 * attribute would be lost (the API takes such names as plain data, README § The API).
 */
export function putAttribute(target: Record<string, AttributeValue>, name: string, value: AttributeValue): void {
  Object.defineProperty(target, name, { value, enumerable: true, writable: true, configurable: true })
}

/** E2O (in an event) or O2O (in an object). `qualifier` is null when the log gives none or ''. */
export interface OcelRelationship {
  objectId: string
  qualifier: string | null
}

export interface OcelEvent {
  id: string
  type: string
  /** ms since the epoch, UTC. */
  time: number
  /** Attribute name → value, in the order the log lists them. */
  attributes: Record<string, AttributeValue>
  relationships: OcelRelationship[]
}

/** One entry of an object's attribute history: `value` holds from `time` (ms since the epoch) on. */
export interface OcelObjectAttribute {
  name: string
  time: number
  value: AttributeValue
}

export interface OcelObject {
  id: string
  type: string
  /** In the order the log lists them (not necessarily by time). */
  attributes: OcelObjectAttribute[]
  /** O2O relationships from this object. */
  relationships: OcelRelationship[]
}

/** A declared event or object type and its attributes (OCEL type names: string, integer, float, boolean, time). */
export interface OcelTypeDeclaration {
  name: string
  attributes: { name: string; type: string }[]
}

/**
 * An attribute value given as text, typed by its declared OCEL type: `integer` (digits, a safe
 * integer) and `float` (a finite number) → numbers, `boolean` (`true`/`false`, `1`/`0`, any case) →
 * true/false; `string`, `time`, no declaration, or text that does not read as the declared type →
 * the text as written. The OCEL 2.0 JSON schema and the XML XSD carry every value as a string and
 * type it in the event or object type's declaration (OCEL 2.0 specification, § attribute types).
 */
export function typedValue(raw: string, type: string | undefined): AttributeValue {
  const s = raw.trim()
  switch (type) {
    case 'integer':
      return /^[+-]?\d+$/.test(s) && Number.isSafeInteger(Number(s)) ? Number(s) : raw
    case 'float': {
      const n = Number(s)
      return s !== '' && Number.isFinite(n) ? n : raw
    }
    case 'boolean':
      if (/^(true|1)$/i.test(s)) return true
      if (/^(false|0)$/i.test(s)) return false
      return raw
    default:
      return raw
  }
}

/** The declared OCEL type of each attribute, by event or object type name, then attribute name. */
export function attributeTypesOf(declarations: readonly OcelTypeDeclaration[]): Map<string, Map<string, string>> {
  return new Map(declarations.map((d) => [d.name, new Map(d.attributes.map((a) => [a.name, a.type]))]))
}

/** Something a reader counted: how often, and a few examples (ids, table names) for the summary. */
export interface Tally {
  count: number
  examples: string[]
}

const EXAMPLES_MAX = 5

/** Adds one occurrence to `tallies[cause]`, keeping the first few examples. */
export function tally(tallies: Record<string, Tally>, cause: string, example: string, n = 1): void {
  const t = tallies[cause] ?? { count: 0, examples: [] }
  t.count += n
  if (t.examples.length < EXAMPLES_MAX && !t.examples.includes(example)) t.examples.push(example)
  tallies[cause] = t
}

/** What reading found besides the log itself. */
export interface ReadNotes {
  /** The zone that timestamps without one were read in (`--timezone`). */
  timezone: string
  /** Timestamps without a zone, read in `timezone`. */
  naiveTimestamps: number
  /** Timestamps with digits below the millisecond, which the API does not keep. */
  truncatedTimestamps: number
  /**
   * Parts of the file that could not be read and were left out, by cause (snake_case), e.g.
   * `event_unreadable_time`, `object_attribute_unreadable_time`. Each is reported in the summary.
   */
  unreadable: Record<string, Tally>
}

export type OcelFormat = 'json' | 'sqlite' | 'xml'

export interface OcelLog {
  format: OcelFormat
  eventTypes: OcelTypeDeclaration[]
  objectTypes: OcelTypeDeclaration[]
  events: OcelEvent[]
  objects: OcelObject[]
  notes: ReadNotes
}

/** The file is not an OCEL 2.0 log this reader can read (the message says why and where). */
export { OcelReadError } from '../../core/errors.js'

/** An id, type name or qualifier as a string: strings as they are, numbers and booleans with String; null otherwise. */
export function asText(value: unknown): string | null {
  if (typeof value === 'string') return value
  if (typeof value === 'number' && Number.isFinite(value)) return String(value)
  if (typeof value === 'bigint' || typeof value === 'boolean') return String(value)
  return null
}

/** A qualifier: '' and missing values mean "no qualifier" (the API rejects an empty one). */
export function asQualifier(value: unknown): string | null {
  const q = asText(value)
  return q === null || q === '' ? null : q
}

/** Fresh notes for a reader. */
export function newNotes(timezone: string): ReadNotes {
  return { timezone, naiveTimestamps: 0, truncatedTimestamps: 0, unreadable: {} }
}

/**
 * What a streaming reader hands on, item by item, in file order. Attribute values given as text
 * (JSON strings, XML element text) are handed on as written: a declaration may come after the items
 * it types, so they are typed once reading ends (see `ReadEnd.typeText` and `valueTyper`).
 */
export interface OcelSink {
  eventType(declaration: OcelTypeDeclaration): void
  objectType(declaration: OcelTypeDeclaration): void
  event(event: OcelEvent): void
  object(object: OcelObject): void
}

/** What a reader knows once the whole file is read. */
export interface ReadEnd {
  format: OcelFormat
  notes: ReadNotes
  /** Whether text attribute values are still to be typed by their declaration (JSON, XML; SQLite values come typed). */
  typeText: boolean
}

/** Types attribute values of one event or object type, by its declarations (see typedValue). */
export type ValueTyper = (type: string, name: string, value: AttributeValue) => AttributeValue

/**
 * The typer of a log's attribute values once its declarations are known: text → typedValue by the
 * declared type of (`type`, `name`); anything else as it is. The identity when `typeText` is false.
 */
export function valueTyper(declarations: readonly OcelTypeDeclaration[], typeText: boolean): ValueTyper {
  if (!typeText) return (_type, _name, value) => value
  const types = attributeTypesOf(declarations)
  return (type, name, value) => (typeof value === 'string' ? typedValue(value, types.get(type)?.get(name)) : value)
}

/** Types an event's attributes in place (see valueTyper). */
export function typeEvent(e: OcelEvent, typer: ValueTyper): OcelEvent {
  for (const [name, value] of Object.entries(e.attributes)) putAttribute(e.attributes, name, typer(e.type, name, value))
  return e
}

/** Types an object's attribute history in place (see valueTyper). */
export function typeObject(o: OcelObject, typer: ValueTyper): OcelObject {
  for (const a of o.attributes) a.value = typer(o.type, a.name, a.value)
  return o
}

/** A sink that keeps the whole log in memory: `finish` gives the OcelLog, with its values typed. */
export function collector(): { sink: OcelSink; finish(end: ReadEnd): OcelLog } {
  const eventTypes: OcelTypeDeclaration[] = []
  const objectTypes: OcelTypeDeclaration[] = []
  const events: OcelEvent[] = []
  const objects: OcelObject[] = []
  return {
    sink: {
      eventType: (d) => eventTypes.push(d),
      objectType: (d) => objectTypes.push(d),
      event: (e) => events.push(e),
      object: (o) => objects.push(o),
    },
    finish: (end) => {
      const eventTyper = valueTyper(eventTypes, end.typeText)
      const objectTyper = valueTyper(objectTypes, end.typeText)
      for (const e of events) typeEvent(e, eventTyper)
      for (const o of objects) typeObject(o, objectTyper)
      return { format: end.format, eventTypes, objectTypes, events, objects, notes: end.notes }
    },
  }
}

/** A streaming reader: takes the file in chunks (`write`), then `end` says what it found. */
export interface ChunkReader {
  write(chunk: Uint8Array): void
  end(): ReadEnd
}

/** Reads a whole text held in memory with a streaming reader made by `reader`, into an OcelLog. */
export function readText(text: string, reader: (sink: OcelSink) => ChunkReader): OcelLog {
  const { sink, finish } = collector()
  const r = reader(sink)
  r.write(new TextEncoder().encode(text))
  return finish(r.end())
}
