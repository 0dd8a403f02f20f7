/**
 * Writer of OCEL 2.0 XML (the form pm4py reads and writes, validated by pm4py's
 * `ocel2-validation.xsd`), from the OCEL 2.0 JSON document that `ocelog export` builds, so that the
 * XML form carries exactly the same log:
 *
 * ```xml
 * <log>
 *   <object-types><object-type name="order"><attributes><attribute name="amount" type="integer"/></attributes></object-type></object-types>
 *   <event-types><event-type name="Create Order"><attributes/></event-type></event-types>
 *   <objects>
 *     <object id="o1" type="order">
 *       <attributes><attribute name="amount" time="2024-01-01T10:00:00.000Z">10</attribute></attributes>
 *       <objects><object object-id="c1" qualifier="placed by" type="customer"/></objects>
 *     </object>
 *   </objects>
 *   <events>
 *     <event id="e1" type="Create Order" time="2024-01-01T10:00:00.000Z">
 *       <attributes/>
 *       <objects><object object-id="o1" qualifier="target" type="order"/></objects>
 *     </event>
 *   </events>
 * </log>
 * ```
 *
 * Attribute values are element text as the document has them; readers type them by the declaration
 * of their event or object type. The XSD declares one `object` element for objects and for E2O/O2O
 * references and requires `type` on it, so references carry the referenced object's type (the
 * readers look only at `object-id` and `qualifier`). Built with fast-xml-parser's XMLBuilder, with
 * the escaping done here (xmlEscape), since a conforming reader changes what XML 1.0 does not escape:
 * it reads a tab, a line feed or a carriage return in an attribute value as a space (XML 1.0 § 3.3.3), and
 * a carriage return in text as a line feed (XML 1.0 § 2.11); written as character references, they come back.
 * The layout's indentation is markup only: text is written exactly as the value is (line feeds,
 * tabs, leading and trailing spaces, characters beyond U+FFFF), with nothing added inside it, so
 * our reader (src/ocel/import/read-xml.ts) and any conforming one read every value back unchanged.
 */
import { XMLBuilder } from 'fast-xml-parser'
import type { OcelJson } from './ocel-json.js'

const OCEL_ATTRIBUTE_TYPES = new Set(['string', 'integer', 'float', 'boolean', 'time'])

type XmlNode = Record<string, unknown>

const REFERENCES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;', '\t': '&#9;', '\n': '&#10;', '\r': '&#13;' }

/** Characters outside the Char production (XML 1.0 § 2.2): C0 controls other than tab, line feed and carriage return, U+FFFE and U+FFFF. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: these control characters are what it looks for
const NOT_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/

/**
 * A value escaped for XML 1.0: `&`, `<` and `>` everywhere; in an attribute value also both quotes
 * and the tab, line feed and carriage return (which a reader's attribute-value normalization would
 * turn into spaces); in text also the carriage return (which its line-end handling would drop).
 * @throws Error naming the character when the value holds one that XML 1.0 cannot carry at all (NOT_XML):
 *   such a file would not be well-formed, and no reader would read any of it.
 */
export function xmlEscape(value: unknown, inAttribute: boolean): string {
  const text = String(value)
  const forbidden = NOT_XML.exec(text)
  if (forbidden !== null) {
    const code = (forbidden[0].codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')
    const shown = JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}…` : text)
    throw new Error(
      `OCEL XML: the value ${shown} holds U+${code}, a character XML 1.0 cannot carry (not even escaped); export this dataset with --format json or --format sqlite`,
    )
  }
  return text.replace(inAttribute ? /[&<>"'\t\n\r]/g : /[&<>\r]/g, (c) => REFERENCES[c] ?? c)
}

function declarations(types: OcelJson['eventTypes'], element: string): XmlNode {
  return {
    [element]: types.map((t) => ({
      '@_name': t.name,
      attributes: { attribute: t.attributes.map((a) => ({ '@_name': a.name, '@_type': OCEL_ATTRIBUTE_TYPES.has(a.type) ? a.type : 'string' })) },
    })),
  }
}

/** @param typeOf the object type of the i-th relationship's target. */
function references(
  relationships: readonly { objectId: string; qualifier: string }[] | undefined,
  typeOf: (r: { objectId: string }, i: number) => string,
): XmlNode {
  return {
    object: (relationships ?? []).map((r, i) => ({ '@_object-id': r.objectId, '@_qualifier': r.qualifier, '@_type': typeOf(r, i) })),
  }
}

type XmlObject = OcelJson['objects'][number]
type XmlEvent = OcelJson['events'][number]
type RefType = (r: { objectId: string }, i: number) => string

function objectNode(o: XmlObject, typeOf: RefType): XmlNode {
  const node: XmlNode = {
    '@_id': o.id,
    '@_type': o.type,
    attributes: { attribute: (o.attributes ?? []).map((a) => ({ '@_name': a.name, '@_time': a.time, '#text': a.value })) },
  }
  if ((o.relationships ?? []).length > 0) node.objects = references(o.relationships, typeOf)
  return node
}

function eventNode(e: XmlEvent, typeOf: RefType): XmlNode {
  return {
    '@_id': e.id,
    '@_type': e.type,
    '@_time': e.time,
    attributes: { attribute: (e.attributes ?? []).map((a) => ({ '@_name': a.name, '#text': a.value })) },
    objects: references(e.relationships, typeOf),
  }
}

function builder(): XMLBuilder {
  return new XMLBuilder({
    ignoreAttributes: false,
    attributeNamePrefix: '@_',
    textNodeName: '#text',
    format: true,
    indentBy: '  ',
    suppressEmptyNode: true,
    processEntities: false,
    attributeValueProcessor: (_name: string, value: unknown) => xmlEscape(value, true),
    tagValueProcessor: (_name: string, value: unknown) => xmlEscape(value, false),
  })
}

const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n'

/**
 * OCEL 2.0 XML written piece by piece, for an export that streams (src/ocel/export-writer.ts): the
 * head (declaration, `<log>`, the type declarations), each object and each event as the lines that
 * `toOcelXml` gives them, and the section tags around them. Put together in the order of
 * `toOcelXml` (head, objects, events, `</log>`) they are its text, byte for byte.
 */
export class OcelXmlPieces {
  private readonly b = builder()

  /** The declaration, `<log>` and the `<object-types>` and `<event-types>` elements. */
  head(eventTypes: OcelJson['eventTypes'], objectTypes: OcelJson['objectTypes']): string {
    const log = String(
      this.b.build({ log: { 'object-types': declarations(objectTypes, 'object-type'), 'event-types': declarations(eventTypes, 'event-type') } }),
    )
    return `${XML_DECLARATION}${log.trimEnd().slice(0, -'</log>'.length)}`
  }

  /** One `<object>` element's lines. @param targetTypes the object type of each relationship's target. */
  object(o: XmlObject, targetTypes: readonly string[]): string {
    return this.inSection('objects', { object: objectNode(o, (_r, i) => targetTypes[i] ?? '') })
  }

  /** One `<event>` element's lines. @param targetTypes the object type of each relationship's target. */
  event(e: XmlEvent, targetTypes: readonly string[]): string {
    return this.inSection('events', { event: eventNode(e, (_r, i) => targetTypes[i] ?? '') })
  }

  /**
   * The lines of the element in `content` as they stand in `section` of `<log>` (4 spaces in): built
   * inside that section and cut out of it, so that the builder indents the markup and nothing else.
   * Indenting the lines afterwards would also indent the text after a line feed in a value.
   * @throws Error when the builder lays the section out otherwise (a bug: the cut would be wrong).
   */
  private inSection(section: 'objects' | 'events', content: XmlNode): string {
    const text = String(this.b.build({ log: { [section]: content } }))
    const head = `<log>\n  <${section}>\n`
    const tail = `  </${section}>\n</log>\n`
    if (!text.startsWith(head) || !text.endsWith(tail)) throw new Error(`OCEL XML: the builder laid out <${section}> unexpectedly`)
    return text.slice(head.length, text.length - tail.length)
  }

  /** The opening of section `objects` or `events`, or the whole empty section when it has no element. */
  open(section: 'objects' | 'events', empty: boolean): string {
    return empty ? `  <${section}/>\n` : `  <${section}>\n`
  }

  /** The closing of a section that has elements. */
  close(section: 'objects' | 'events'): string {
    return `  </${section}>\n`
  }

  /** The end of the document. */
  end(): string {
    return '</log>\n'
  }
}

/**
 * The OCEL 2.0 XML text of `doc` (UTF-8, markup indented by 2 spaces, text as it is, ending in a
 * newline): `<log>` with `<object-types>`, `<event-types>`, `<objects>` and `<events>` in this
 * order, as the XSD requires.
 * Every element the XSD requires is present (`<attributes/>` and `<objects/>` of an event even when
 * empty). Object attribute values carry their `time`; O2O relationships are the object's
 * `<objects>`. The declared attribute types are written as they are when they are one of OCEL's five
 * type names, else as `string`. Pure.
 */
export function toOcelXml(doc: OcelJson): string {
  const typeOf = new Map<string, string>()
  for (const o of doc.objects) if (!typeOf.has(o.id)) typeOf.set(o.id, o.type)
  const refType: RefType = (r) => typeOf.get(r.objectId) ?? ''
  const log = {
    'object-types': declarations(doc.objectTypes, 'object-type'),
    'event-types': declarations(doc.eventTypes, 'event-type'),
    objects: { object: doc.objects.map((o) => objectNode(o, refType)) },
    events: { event: doc.events.map((e) => eventNode(e, refType)) },
  }
  return `${XML_DECLARATION}${String(builder().build({ log })).trimEnd()}\n`
}
