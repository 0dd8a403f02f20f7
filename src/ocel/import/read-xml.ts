/**
 * Reader of OCEL 2.0 XML (`.xml`, `.xmlocel`; pm4py's ocel2-validation.xsd):
 * `<log>` with `<object-types>`, `<event-types>`, `<objects>` and `<events>`. Attribute values are
 * element text; they are typed by the declaration of their event or object type (`integer` and
 * `float` → numbers, `boolean` → true/false, `string` and `time` → text as written), so an XML log
 * and the JSON or SQLite form of the same log give the same values. An attribute `time="0"` is the
 * epoch (initial value). Parsed with fast-xml-parser; items that cannot be read are counted.
 */
import { XMLParser } from 'fast-xml-parser'
import {
  asQualifier,
  attributeTypesOf,
  asText,
  newNotes,
  OcelReadError,
  tally,
  type OcelEvent,
  type OcelLog,
  type OcelObject,
  type OcelRelationship,
  type OcelTypeDeclaration,
  type ReadNotes,
  typedValue,
  putAttribute,
} from './model.js'
import { readTime, type TimeZone } from './time.js'

const ATTRS = '@'
const TEXT = '#text'
const REPEATED = new Set(['object-type', 'event-type', 'attribute', 'object', 'event'])

type Node = Record<string, unknown>

function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** The XML attributes of an element. */
function attrs(node: Node): Node {
  const a = node[ATTRS]
  return isNode(a) ? a : {}
}

/** The repeated child elements `<child>` of `<container>` under `node` (e.g. objects/object). */
function children(node: unknown, container: string, child: string): Node[] {
  if (!isNode(node)) return []
  const c = node[container]
  if (!isNode(c)) return []
  const list = c[child]
  return Array.isArray(list) ? list.filter(isNode) : []
}

function text(node: Node): string {
  const t = node[TEXT]
  return typeof t === 'string' ? t : (asText(t) ?? '')
}

function declarations(log: Node, container: string, child: string, cause: string, notes: ReadNotes): OcelTypeDeclaration[] {
  const out: OcelTypeDeclaration[] = []
  children(log, container, child).forEach((t, i) => {
    const name = asText(attrs(t).name)
    if (name === null) {
      tally(notes.unreadable, cause, `${child}[${String(i)}]`)
      return
    }
    const attributes = children(t, 'attributes', 'attribute').flatMap((a) => {
      const n = asText(attrs(a).name)
      return n === null ? [] : [{ name: n, type: asText(attrs(a).type) ?? 'string' }]
    })
    out.push({ name, attributes })
  })
  return out
}

function relationships(node: Node, where: string, cause: string, notes: ReadNotes): OcelRelationship[] {
  const out: OcelRelationship[] = []
  for (const r of children(node, 'objects', 'object')) {
    const objectId = asText(attrs(r)['object-id'])
    if (objectId === null) {
      tally(notes.unreadable, cause, where)
      continue
    }
    out.push({ objectId, qualifier: asQualifier(attrs(r).qualifier) })
  }
  return out
}

/**
 * Reads an OCEL 2.0 XML document.
 * @throws OcelReadError when the text is not XML with a `<log>` root.
 */
export function readOcelXml(xml: string, zone: TimeZone): OcelLog {
  const parser = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '',
    attributesGroupName: ATTRS,
    textNodeName: TEXT,
    alwaysCreateTextNode: true,
    parseTagValue: false,
    parseAttributeValue: false,
    trimValues: false,
    // Character references (`&#10;`, `&#xE9;`), as pm4py's lxml writes a line feed in an attribute
    // value or any character its encoding lacks: fast-xml-parser decodes them only with this option.
    htmlEntities: true,
    isArray: (tagName) => REPEATED.has(tagName),
  })
  let doc: unknown
  try {
    doc = parser.parse(xml, true)
  } catch (error) {
    throw new OcelReadError(`not well-formed XML: ${error instanceof Error ? error.message : String(error)}`)
  }
  const log = isNode(doc) ? doc.log : undefined
  if (!isNode(log)) throw new OcelReadError('no <log> element: not an OCEL 2.0 XML log')
  const notes = newNotes(zone.label)
  const eventTypes = declarations(log, 'event-types', 'event-type', 'event_declaration_unreadable', notes)
  const objectTypes = declarations(log, 'object-types', 'object-type', 'object_declaration_unreadable', notes)
  const eventAttributeTypes = attributeTypesOf(eventTypes)
  const objectAttributeTypes = attributeTypesOf(objectTypes)

  const objects: OcelObject[] = []
  children(log, 'objects', 'object').forEach((o, i) => {
    const id = asText(attrs(o).id)
    const type = asText(attrs(o).type)
    if (id === null || type === null) {
      tally(notes.unreadable, 'object_unreadable', id ?? `object[${String(i)}]`)
      return
    }
    const declared = objectAttributeTypes.get(type)
    const attributes: OcelObject['attributes'] = []
    for (const a of children(o, 'attributes', 'attribute')) {
      const name = asText(attrs(a).name)
      if (name === null) {
        tally(notes.unreadable, 'object_attribute_unreadable', id)
        continue
      }
      const rawTime = attrs(a).time
      const time = rawTime === undefined ? 0 : readTime(rawTime, zone, notes)
      if (time === null) {
        tally(notes.unreadable, 'object_attribute_unreadable_time', `${id}.${name} (${String(rawTime)})`)
        continue
      }
      attributes.push({ name, time, value: typedValue(text(a), declared?.get(name)) })
    }
    objects.push({ id, type, attributes, relationships: relationships(o, id, 'o2o_unreadable', notes) })
  })

  const events: OcelEvent[] = []
  children(log, 'events', 'event').forEach((e, i) => {
    const id = asText(attrs(e).id) ?? `event[${String(i)}]`
    const type = asText(attrs(e).type)
    if (type === null) {
      tally(notes.unreadable, 'event_unreadable', id)
      return
    }
    const time = readTime(attrs(e).time, zone, notes)
    if (time === null) {
      tally(notes.unreadable, 'event_unreadable_time', `${id} (${String(attrs(e).time)})`)
      return
    }
    const declared = eventAttributeTypes.get(type)
    const attributes: Record<string, unknown> = {}
    for (const a of children(e, 'attributes', 'attribute')) {
      const name = asText(attrs(a).name)
      if (name !== null) putAttribute(attributes, name, typedValue(text(a), declared?.get(name)))
    }
    events.push({ id, type, time, attributes, relationships: relationships(e, id, 'e2o_unreadable', notes) })
  })

  return { format: 'xml', eventTypes, objectTypes, events, objects, notes }
}
