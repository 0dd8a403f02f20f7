/**
 * Reader of OCEL 2.0 JSON (`.json`, `.jsonocel`): the layout of src/ocel/ocel-json.ts
 * (`eventTypes`, `objectTypes`, `events`, `objects`), read as tolerantly as OcelJsonTolerant and a
 * little more, because real files differ from the standard's schema: attribute values are numbers
 * or booleans where the schema says string (kept; text values are typed by their declaration, as
 * the XML reader types element text), ids and qualifiers may be numbers, times may have no
 * zone, `attributes`/`relationships` may be missing, and an object attribute may have no `time`
 * (read as the epoch: an initial value). Items that cannot be read are counted in `notes.unreadable`.
 */
import { Tokenizer, TokenParser, TokenType } from '@streamparser/json'
import {
  asQualifier,
  asText,
  type AttributeValue,
  type ChunkReader,
  newNotes,
  OcelReadError,
  tally,
  type OcelEvent,
  type OcelLog,
  type OcelObject,
  type OcelRelationship,
  type OcelSink,
  type OcelTypeDeclaration,
  type ReadNotes,
  putAttribute,
  readText,
} from './model.js'
import { readTime, type TimeZone } from './time.js'
import { messageOf } from '../../core/errors.js'

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function declaration(t: unknown, i: number, what: 'event' | 'object', notes: ReadNotes): OcelTypeDeclaration | null {
  const name = isRecord(t) ? asText(t.name) : null
  if (!isRecord(t) || name === null) {
    tally(notes.unreadable, `${what}_declaration_unreadable`, `${what}Types[${String(i)}]`)
    return null
  }
  const attributes = Array.isArray(t.attributes)
    ? t.attributes.flatMap((a) => {
        const n = isRecord(a) ? asText(a.name) : null
        return n === null || !isRecord(a) ? [] : [{ name: n, type: asText(a.type) ?? 'string' }]
      })
    : []
  return { name, attributes }
}

function relationships(value: unknown, where: string, cause: string, notes: ReadNotes): OcelRelationship[] {
  if (!Array.isArray(value)) return []
  const out: OcelRelationship[] = []
  for (const r of value) {
    const objectId = isRecord(r) ? asText(r.objectId) : null
    if (!isRecord(r) || objectId === null) {
      tally(notes.unreadable, cause, where)
      continue
    }
    out.push({ objectId, qualifier: asQualifier(r.qualifier) })
  }
  return out
}

/**
 * An attribute's value as the file gives it: null for none; text is typed by its declaration once
 * reading ends (the standard's schema writes every value as a string, and so do Ocelog's exports;
 * real files often write numbers and booleans as such, which are kept). See valueTyper.
 */
function givenValue(value: unknown): AttributeValue {
  return value === undefined || value === null ? null : value
}

/** Event attributes: `[{name, value}]` as the standard says, or a plain `{name: value}` object. */
function eventAttributes(value: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  if (Array.isArray(value)) {
    for (const a of value) {
      const name = isRecord(a) ? asText(a.name) : null
      if (name !== null && isRecord(a)) putAttribute(out, name, givenValue(a.value))
    }
  } else if (isRecord(value)) {
    for (const [name, v] of Object.entries(value)) putAttribute(out, name, givenValue(v))
  }
  return out
}

function readEvent(e: unknown, i: number, zone: TimeZone, notes: ReadNotes): OcelEvent | null {
  const where = isRecord(e) ? (asText(e.id) ?? `events[${String(i)}]`) : `events[${String(i)}]`
  const type = isRecord(e) ? asText(e.type) : null
  if (!isRecord(e) || type === null) {
    tally(notes.unreadable, 'event_unreadable', where)
    return null
  }
  const time = readTime(e.time, zone, notes)
  if (time === null) {
    tally(notes.unreadable, 'event_unreadable_time', `${where} (${String(e.time)})`)
    return null
  }
  return {
    id: asText(e.id) ?? `#${String(i)}`,
    type,
    time,
    attributes: eventAttributes(e.attributes),
    relationships: relationships(e.relationships, where, 'e2o_unreadable', notes),
  }
}

function readObject(o: unknown, i: number, zone: TimeZone, notes: ReadNotes): OcelObject | null {
  const id = isRecord(o) ? asText(o.id) : null
  const type = isRecord(o) ? asText(o.type) : null
  if (!isRecord(o) || id === null || type === null) {
    tally(notes.unreadable, 'object_unreadable', id ?? `objects[${String(i)}]`)
    return null
  }
  const attributes: OcelObject['attributes'] = []
  if (Array.isArray(o.attributes)) {
    for (const a of o.attributes) {
      const name = isRecord(a) ? asText(a.name) : null
      if (!isRecord(a) || name === null) {
        tally(notes.unreadable, 'object_attribute_unreadable', id)
        continue
      }
      const time = a.time === undefined || a.time === null ? 0 : readTime(a.time, zone, notes)
      if (time === null) {
        tally(notes.unreadable, 'object_attribute_unreadable_time', `${id}.${name} (${String(a.time)})`)
        continue
      }
      attributes.push({ name, time, value: givenValue(a.value) })
    }
  }
  return { id, type, attributes, relationships: relationships(o.relationships, id, 'o2o_unreadable', notes) }
}

/** The top-level members read item by item. */
const ARRAYS = new Set(['eventTypes', 'objectTypes', 'events', 'objects'])

/**
 * A streaming reader of an OCEL 2.0 JSON document (UTF-8), with @streamparser/json: each element of
 * `eventTypes`, `objectTypes`, `events` and `objects` is parsed, handed to `sink` and dropped, so
 * memory holds one element at a time whatever the file's size.
 * @param zone the zone of timestamps without one.
 * @throws OcelReadError (from `write` or `end`) when the text is not JSON, is OCEL 1.0, or is not an
 *   OCEL 2.0 document.
 */
export function jsonReader(zone: TimeZone, sink: OcelSink): ChunkReader {
  const notes = newNotes(zone.label)
  const tokenizer = new Tokenizer()
  const parser = new TokenParser({ paths: ['$.eventTypes.*', '$.objectTypes.*', '$.events.*', '$.objects.*'], keepStack: false })
  const seen = new Set<string>()
  // The root's members are followed token by token: which keys it has, and what kind of value each of ours is.
  let depth = 0
  let started = false
  let expectKey = false
  let member: string | null = null
  tokenizer.onToken = (t) => {
    const { token } = t
    started = true
    if (depth === 0 && token !== TokenType.LEFT_BRACE) throw new OcelReadError('an OCEL 2.0 JSON log is a JSON object with "events" and "objects"')
    if (depth === 1) {
      if (expectKey && token === TokenType.STRING) {
        const key = String(t.value)
        if (key === 'ocel:events' || key === 'ocel:global-log')
          throw new OcelReadError('this is OCEL 1.0 JSON ("ocel:events"); only OCEL 2.0 logs can be imported')
        seen.add(key)
        member = ARRAYS.has(key) ? key : null
        expectKey = false
      } else if (token === TokenType.COMMA) {
        expectKey = true
      } else if (token !== TokenType.COLON && member !== null) {
        if (token !== TokenType.LEFT_BRACKET && token !== TokenType.NULL) throw new OcelReadError(`"${member}" must be an array`)
        member = null
      }
    }
    if (token === TokenType.LEFT_BRACE || token === TokenType.LEFT_BRACKET) {
      depth += 1
      if (depth === 1) expectKey = true
    } else if (token === TokenType.RIGHT_BRACE || token === TokenType.RIGHT_BRACKET) depth -= 1
    parser.write(t)
  }
  parser.onValue = ({ value, key, stack }) => {
    const where = stack[1]?.key
    const i = typeof key === 'number' ? key : 0
    if (where === 'events') {
      const e = readEvent(value, i, zone, notes)
      if (e !== null) sink.event(e)
    } else if (where === 'objects') {
      const o = readObject(value, i, zone, notes)
      if (o !== null) sink.object(o)
    } else if (where === 'eventTypes') {
      const d = declaration(value, i, 'event', notes)
      if (d !== null) sink.eventType(d)
    } else if (where === 'objectTypes') {
      const d = declaration(value, i, 'object', notes)
      if (d !== null) sink.objectType(d)
    }
  }
  const fail = (error: unknown): never => {
    if (error instanceof OcelReadError) throw error
    throw new OcelReadError(`not JSON: ${messageOf(error)}`)
  }
  return {
    write: (chunk) => {
      try {
        tokenizer.write(chunk)
      } catch (error) {
        fail(error)
      }
    },
    end: () => {
      try {
        tokenizer.end()
        if (!parser.isEnded) parser.end()
      } catch (error) {
        fail(error)
      }
      if (!started || depth !== 0) fail(new Error('unexpected end of the text'))
      if (!seen.has('events') && !seen.has('objects')) throw new OcelReadError('no "events" or "objects": not an OCEL 2.0 JSON log')
      return { format: 'json', notes, typeText: true }
    },
  }
}

/**
 * Reads an OCEL 2.0 JSON document held in memory (the streaming reader over its text).
 * @param text the file's text.
 * @param zone the zone of timestamps without one.
 * @throws OcelReadError when the text is not JSON, is OCEL 1.0, or is not an OCEL 2.0 document.
 */
export function readOcelJson(text: string, zone: TimeZone): OcelLog {
  return readText(text, (sink) => jsonReader(zone, sink))
}
