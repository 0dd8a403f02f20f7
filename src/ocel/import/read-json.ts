/**
 * Reader of OCEL 2.0 JSON (`.json`, `.jsonocel`): the layout of src/ocel/ocel-json.ts
 * (`eventTypes`, `objectTypes`, `events`, `objects`), read as tolerantly as OcelJsonTolerant and a
 * little more, because real files differ from the standard's schema: attribute values are numbers
 * or booleans where the schema says string (kept; text values are typed by their declaration, as
 * the XML reader types element text), ids and qualifiers may be numbers, times may have no
 * zone, `attributes`/`relationships` may be missing, and an object attribute may have no `time`
 * (read as the epoch: an initial value). Items that cannot be read are counted in `notes.unreadable`.
 */
import {
  asQualifier,
  asText,
  attributeTypesOf,
  type AttributeValue,
  newNotes,
  OcelReadError,
  tally,
  type OcelEvent,
  type OcelLog,
  type OcelObject,
  type OcelRelationship,
  type OcelTypeDeclaration,
  type ReadNotes,
  putAttribute,
  typedValue,
} from './model.js'
import { readTime, type TimeZone } from './time.js'

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function arrayAt(doc: Record<string, unknown>, key: string): unknown[] {
  const v = doc[key]
  if (v === undefined || v === null) return []
  if (!Array.isArray(v)) throw new OcelReadError(`"${key}" must be an array`)
  return v
}

function declarations(items: unknown[], what: string, notes: ReadNotes): OcelTypeDeclaration[] {
  const out: OcelTypeDeclaration[] = []
  items.forEach((t, i) => {
    const name = isRecord(t) ? asText(t.name) : null
    if (!isRecord(t) || name === null) {
      tally(notes.unreadable, `${what}_declaration_unreadable`, `${what}Types[${String(i)}]`)
      return
    }
    const attributes = Array.isArray(t.attributes)
      ? t.attributes.flatMap((a) => {
          const n = isRecord(a) ? asText(a.name) : null
          return n === null || !isRecord(a) ? [] : [{ name: n, type: asText(a.type) ?? 'string' }]
        })
      : []
    out.push({ name, attributes })
  })
  return out
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
 * An attribute's value as the file gives it, typed by its declaration when it is text: the
 * standard's schema writes every value as a string (so do Ocelog's exports) and declares its type;
 * real files often write numbers and booleans as such, which are kept. See typedValue.
 */
function declaredValue(value: unknown, declared: ReadonlyMap<string, string> | undefined, name: string): AttributeValue {
  if (value === undefined || value === null) return null
  return typeof value === 'string' ? typedValue(value, declared?.get(name)) : value
}

/** Event attributes: `[{name, value}]` as the standard says, or a plain `{name: value}` object; typed by `declared` (declaredValue). */
function eventAttributes(value: unknown, declared: ReadonlyMap<string, string> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  if (Array.isArray(value)) {
    for (const a of value) {
      const name = isRecord(a) ? asText(a.name) : null
      if (name !== null && isRecord(a)) putAttribute(out, name, declaredValue(a.value, declared, name))
    }
  } else if (isRecord(value)) {
    for (const [name, v] of Object.entries(value)) putAttribute(out, name, declaredValue(v, declared, name))
  }
  return out
}

/**
 * Reads an OCEL 2.0 JSON document.
 * @param text the file's text.
 * @param zone the zone of timestamps without one.
 * @throws OcelReadError when the text is not JSON, is OCEL 1.0, or is not an OCEL 2.0 document.
 */
export function readOcelJson(text: string, zone: TimeZone): OcelLog {
  let doc: unknown
  try {
    doc = JSON.parse(text)
  } catch (error) {
    throw new OcelReadError(`not JSON: ${error instanceof Error ? error.message : String(error)}`)
  }
  if (!isRecord(doc)) throw new OcelReadError('an OCEL 2.0 JSON log is a JSON object with "events" and "objects"')
  if ('ocel:events' in doc || 'ocel:global-log' in doc) throw new OcelReadError('this is OCEL 1.0 JSON ("ocel:events"); only OCEL 2.0 logs can be imported')
  if (!('events' in doc) && !('objects' in doc)) throw new OcelReadError('no "events" or "objects": not an OCEL 2.0 JSON log')
  const notes = newNotes(zone.label)
  const eventTypes = declarations(arrayAt(doc, 'eventTypes'), 'event', notes)
  const objectTypes = declarations(arrayAt(doc, 'objectTypes'), 'object', notes)
  const eventAttributeTypes = attributeTypesOf(eventTypes)
  const objectAttributeTypes = attributeTypesOf(objectTypes)

  const events: OcelEvent[] = []
  arrayAt(doc, 'events').forEach((e, i) => {
    const where = isRecord(e) ? (asText(e.id) ?? `events[${String(i)}]`) : `events[${String(i)}]`
    const type = isRecord(e) ? asText(e.type) : null
    if (!isRecord(e) || type === null) {
      tally(notes.unreadable, 'event_unreadable', where)
      return
    }
    const time = readTime(e.time, zone, notes)
    if (time === null) {
      tally(notes.unreadable, 'event_unreadable_time', `${where} (${String(e.time)})`)
      return
    }
    events.push({
      id: asText(e.id) ?? `#${String(i)}`,
      type,
      time,
      attributes: eventAttributes(e.attributes, eventAttributeTypes.get(type)),
      relationships: relationships(e.relationships, where, 'e2o_unreadable', notes),
    })
  })

  const objects: OcelObject[] = []
  arrayAt(doc, 'objects').forEach((o, i) => {
    const id = isRecord(o) ? asText(o.id) : null
    const type = isRecord(o) ? asText(o.type) : null
    if (!isRecord(o) || id === null || type === null) {
      tally(notes.unreadable, 'object_unreadable', id ?? `objects[${String(i)}]`)
      return
    }
    const declared = objectAttributeTypes.get(type)
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
        attributes.push({ name, time, value: declaredValue(a.value, declared, name) })
      }
    }
    objects.push({ id, type, attributes, relationships: relationships(o.relationships, id, 'o2o_unreadable', notes) })
  })

  return {
    format: 'json',
    eventTypes,
    objectTypes,
    events,
    objects,
    notes,
  }
}
