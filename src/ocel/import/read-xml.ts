/**
 * Reader of OCEL 2.0 XML (`.xml`, `.xmlocel`; pm4py's ocel2-validation.xsd):
 * `<log>` with `<object-types>`, `<event-types>`, `<objects>` and `<events>`. Attribute values are
 * element text; they are typed by the declaration of their event or object type (`integer` and
 * `float` → numbers, `boolean` → true/false, `string` and `time` → text as written), so an XML log
 * and the JSON or SQLite form of the same log give the same values. An attribute `time="0"` is the
 * epoch (initial value). Parsed as a stream with saxes (one event or object in memory at a time);
 * items that cannot be read are counted.
 */
import { SaxesParser, type SaxesTagPlain } from 'saxes'
import {
  asQualifier,
  asText,
  type ChunkReader,
  newNotes,
  OcelReadError,
  tally,
  type OcelEvent,
  type OcelLog,
  type OcelObject,
  type OcelRelationship,
  type OcelSink,
  type ReadNotes,
  type OcelTypeDeclaration,
  putAttribute,
  readText,
} from './model.js'
import { readTime, type TimeZone } from './time.js'
import { messageOf } from '../../core/errors.js'

/** The event, object or type declaration being read, with the attribute element whose text is being gathered. */
type Open =
  | { kind: 'declaration'; of: 'event' | 'object'; name: string | null; index: number; attributes: OcelTypeDeclaration['attributes'] }
  | { kind: 'object'; id: string | null; type: string | null; index: number; attributes: OcelObject['attributes']; relationships: OcelRelationship[] }
  | { kind: 'event'; id: string; type: string | null; time: unknown; index: number; attributes: Record<string, unknown>; relationships: OcelRelationship[] }

/**
 * A streaming reader of an OCEL 2.0 XML document (UTF-8): each declaration, object and event is
 * handed to `sink` when its element closes.
 * @throws OcelReadError (from `write` or `end`) when the text is not well-formed XML with a `<log>` root.
 */
export function xmlReader(zone: TimeZone, sink: OcelSink): ChunkReader {
  const notes = newNotes(zone.label)
  const parser = new SaxesParser({ xmlns: false, position: false })
  const decoder = new TextDecoder('utf-8')
  const path: string[] = []
  const counts = { 'object-type': 0, 'event-type': 0, object: 0, event: 0 }
  let open: Open | null = null
  /** The attribute element inside `open` whose text is gathered: its name and time, or null. */
  let attribute: { name: string | null; time: string | undefined; text: string } | null = null
  let sawLog = false

  const at = (...names: string[]) => path.length === names.length && names.every((n, i) => path[i] === n)
  parser.on('opentag', (tag: SaxesTagPlain) => {
    const a = tag.attributes
    path.push(tag.name)
    if (path.length === 1) {
      if (tag.name !== 'log') throw new OcelReadError('no <log> element: not an OCEL 2.0 XML log')
      sawLog = true
      return
    }
    if (at('log', 'object-types', 'object-type') || at('log', 'event-types', 'event-type')) {
      const of = tag.name === 'object-type' ? 'object' : 'event'
      open = { kind: 'declaration', of, name: asText(a.name), index: counts[tag.name === 'object-type' ? 'object-type' : 'event-type']++, attributes: [] }
    } else if (at('log', 'objects', 'object')) {
      open = { kind: 'object', id: asText(a.id), type: asText(a.type), index: counts.object++, attributes: [], relationships: [] }
    } else if (at('log', 'events', 'event')) {
      const index = counts.event++
      open = { kind: 'event', id: asText(a.id) ?? `event[${String(index)}]`, type: asText(a.type), time: a.time, index, attributes: {}, relationships: [] }
    } else if (open !== null && path.length === 5 && path[3] === 'attributes' && tag.name === 'attribute') {
      if (open.kind === 'declaration') {
        const n = asText(a.name)
        if (n !== null) open.attributes.push({ name: n, type: asText(a.type) ?? 'string' })
      } else attribute = { name: asText(a.name), time: a.time, text: '' }
    } else if (open !== null && open.kind !== 'declaration' && path.length === 5 && path[3] === 'objects' && tag.name === 'object') {
      const objectId = asText(a['object-id'])
      const where = open.kind === 'object' ? (open.id ?? '') : open.id
      if (objectId === null) tally(notes.unreadable, open.kind === 'object' ? 'o2o_unreadable' : 'e2o_unreadable', where)
      else open.relationships.push({ objectId, qualifier: asQualifier(a.qualifier) })
    }
  })
  const onText = (text: string) => {
    if (attribute !== null && path.length === 5) attribute.text += text
  }
  parser.on('text', onText)
  parser.on('cdata', onText)
  parser.on('closetag', () => {
    const depth = path.length
    path.pop()
    if (depth === 5 && attribute !== null && open !== null) {
      finishAttribute(open, attribute, zone, notes)
      attribute = null
    } else if (depth === 3 && open !== null) {
      finishItem(open, zone, sink, notes)
      open = null
    }
  })
  parser.on('error', (error) => {
    throw new OcelReadError(`not well-formed XML: ${error.message}`)
  })

  const wrap = (step: () => void) => {
    try {
      step()
    } catch (error) {
      if (error instanceof OcelReadError) throw error
      throw new OcelReadError(`not well-formed XML: ${messageOf(error)}`)
    }
  }
  return {
    write: (chunk) => wrap(() => parser.write(decoder.decode(chunk, { stream: true }))),
    end: () => {
      wrap(() => {
        parser.write(decoder.decode())
        parser.close()
      })
      if (!sawLog) throw new OcelReadError('no <log> element: not an OCEL 2.0 XML log')
      return { format: 'xml', notes, typeText: true }
    },
  }
}

/** Adds the attribute element `a`, now closed, to the object or event `item` (noting one it cannot read). */
function finishAttribute(item: Open, a: { name: string | null; time: string | undefined; text: string }, zone: TimeZone, notes: ReadNotes): void {
  if (item.kind === 'object') {
    const id = item.id ?? ''
    if (a.name === null) {
      tally(notes.unreadable, 'object_attribute_unreadable', id)
      return
    }
    const time = a.time === undefined ? 0 : readTime(a.time, zone, notes)
    if (time === null) {
      tally(notes.unreadable, 'object_attribute_unreadable_time', `${id}.${a.name} (${String(a.time)})`)
      return
    }
    item.attributes.push({ name: a.name, time, value: a.text })
  } else if (item.kind === 'event' && a.name !== null) putAttribute(item.attributes, a.name, a.text)
}

/** Hands the declaration, object or event `item`, now closed, to `sink` (noting one it cannot read). */
function finishItem(item: Open, zone: TimeZone, sink: OcelSink, notes: ReadNotes): void {
  if (item.kind === 'declaration') {
    if (item.name === null) tally(notes.unreadable, `${item.of}_declaration_unreadable`, `${item.of}-type[${String(item.index)}]`)
    else (item.of === 'event' ? sink.eventType : sink.objectType)({ name: item.name, attributes: item.attributes })
  } else if (item.kind === 'object') {
    if (item.id === null || item.type === null) tally(notes.unreadable, 'object_unreadable', item.id ?? `object[${String(item.index)}]`)
    else sink.object({ id: item.id, type: item.type, attributes: item.attributes, relationships: item.relationships })
  } else {
    if (item.type === null) {
      tally(notes.unreadable, 'event_unreadable', item.id)
      return
    }
    const time = readTime(item.time, zone, notes)
    if (time === null) {
      tally(notes.unreadable, 'event_unreadable_time', `${item.id} (${String(item.time)})`)
      return
    }
    const event: OcelEvent = { id: item.id, type: item.type, time, attributes: item.attributes, relationships: item.relationships }
    sink.event(event)
  }
}

/**
 * Reads an OCEL 2.0 XML document held in memory (the streaming reader over its text).
 * @throws OcelReadError when the text is not XML with a `<log>` root.
 */
export function readOcelXml(xml: string, zone: TimeZone): OcelLog {
  return readText(xml, (sink) => xmlReader(zone, sink))
}
