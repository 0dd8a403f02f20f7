/**
 * Test support for the three OCEL 2.0 forms `ocelog export --format` writes:
 * - `logView`: one canonical view of a log as our readers give it, to compare a JSON, an XML and a
 *   SQLite file of the same log. Events by id (type, time in ms as ISO, attributes, E2O), objects by
 *   (type, id) (attribute history ordered by time then name, file order kept among equal ones, O2O),
 *   declared types with their attribute names and types. Values are compared as OCEL JSON writes them
 *   (`ocelValue`: numbers and booleans as text), since JSON carries them as strings and XML and
 *   SQLite typed.
 * - `toOcelDocument`: a log as read, as an OCEL 2.0 JSON document that our writers take, to make the
 *   forms a shared log does not come in (an XML file of a log published as SQLite).
 * - `xmllint`: validation of an XML file against an XSD with Debian's xmllint (libxml2-utils), and
 *   `relaxedXsd`, the standard XSD without the two keyrefs that cannot express a log in which two
 *   object types or two event types share an attribute name.
 */
import { spawnSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { it } from 'vitest'
import { ocelValue } from '../../src/ocel/export.js'
import type { OcelAttributeType, OcelJson, OcelJsonStrict } from '../../src/ocel/ocel-json.js'
import type { OcelLog, OcelRelationship } from '../../src/ocel/import/model.js'
import { SHARED_OCEL_PRESENT, SHARED_SKIP_REASON } from './fixtures.js'

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

const links = (rs: readonly OcelRelationship[]) =>
  rs.map((r) => [r.objectId, r.qualifier ?? ''] as const).sort((a, b) => compare(a.join('\u0000'), b.join('\u0000')))

const declarations = (ds: OcelLog['eventTypes']) =>
  [...ds]
    .sort((a, b) => compare(a.name, b.name))
    .map((d) => ({ name: d.name, attributes: d.attributes.map((a) => [a.name, a.type] as const).sort((a, b) => compare(a[0], b[0])) }))

/** The canonical view of a log as read (see module comment). */
export function logView(log: OcelLog) {
  return {
    eventTypes: declarations(log.eventTypes),
    objectTypes: declarations(log.objectTypes),
    events: [...log.events]
      .sort((a, b) => compare(a.id, b.id))
      .map((e) => ({
        id: e.id,
        type: e.type,
        time: new Date(e.time).toISOString(),
        attributes: Object.entries(e.attributes)
          .map(([name, value]) => [name, ocelValue(value)] as const)
          .sort((a, b) => compare(a[0], b[0])),
        relationships: links(e.relationships),
      })),
    objects: [...log.objects]
      .sort((a, b) => compare(a.type, b.type) || compare(a.id, b.id))
      .map((o) => ({
        id: o.id,
        type: o.type,
        attributes: [...o.attributes]
          .sort((a, b) => a.time - b.time || compare(a.name, b.name))
          .map((a) => [a.name, new Date(a.time).toISOString(), ocelValue(a.value)] as const),
        relationships: links(o.relationships),
      })),
  }
}

/** Whether two object types, or two event types, of `doc` declare the same attribute name (the XSD's known limit). */
export function sharesAttributeNames(doc: OcelJson): boolean {
  const shared = (types: OcelJson['eventTypes']) => {
    const seen = new Set<string>()
    for (const t of types) {
      for (const name of new Set(t.attributes.map((a) => a.name))) {
        if (seen.has(name)) return true
        seen.add(name)
      }
    }
    return false
  }
  return shared(doc.objectTypes) || shared(doc.eventTypes)
}

/** Whether xmllint runs here; when not, `XMLLINT_SKIP_REASON` says why tests that need it were skipped. */
export const XMLLINT_PRESENT = spawnSync('xmllint', ['--version']).status === 0
export const XMLLINT_SKIP_REASON = 'xmllint is not installed (Debian: apt-get install libxml2-utils; .ci/run installs it)'

/**
 * `it` for a test that runs xmllint, and with `needsSharedOcel` also reads the OCEL 2.0 XSD from the
 * shared logs: skipped, with the reason printed, when either is missing here.
 */
export function itWithXmllint(name: string, fn: () => unknown, needsSharedOcel = false): void {
  const reason = !XMLLINT_PRESENT ? XMLLINT_SKIP_REASON : needsSharedOcel && !SHARED_OCEL_PRESENT ? SHARED_SKIP_REASON : null
  if (reason !== null) console.info(`skip: ${name}: ${reason}`)
  it.skipIf(reason !== null)(name, async () => {
    await fn()
  })
}

/** `xmllint --noout --schema xsd file`: whether it validates, and what xmllint said. */
export function xmllint(xsd: string, file: string): { valid: boolean; output: string } {
  const r = spawnSync('xmllint', ['--noout', '--schema', xsd, file], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
  return { valid: r.status === 0, output: `${r.stdout}${r.stderr}` }
}

/**
 * Writes to `to` a copy of the XSD at `from` without the keyrefs `objectAttributeRef` and
 * `eventAttributeRef` (attribute names of objects and events must be declared by some type), which
 * libxml2 cannot evaluate when two types declare one name ("More than one match found").
 * @throws Error when the XSD does not hold exactly those two keyrefs.
 */
export function relaxedXsd(from: string, to: string): string {
  const xsd = readFileSync(from, 'utf8')
  const pattern = /<xs:keyref name="(?:objectAttributeRef|eventAttributeRef)"[\s\S]*?<\/xs:keyref>/g
  const relaxed = xsd.replace(pattern, '')
  if ((xsd.match(pattern) ?? []).length !== 2) throw new Error(`${from}: expected the keyrefs objectAttributeRef and eventAttributeRef`)
  writeFileSync(to, relaxed)
  return to
}

const ATTRIBUTE_TYPES: readonly string[] = ['string', 'integer', 'float', 'boolean', 'time']

/** A declared attribute type as one of OCEL's five names (anything else is written as `string`). */
function attributeType(type: string): OcelAttributeType {
  return ATTRIBUTE_TYPES.includes(type) ? (type as OcelAttributeType) : 'string'
}

/**
 * `log` (as a reader gives it) as a strict OCEL 2.0 JSON document: times in UTC ISO 8601 with ms,
 * values as OCEL JSON text (`ocelValue`), no qualifier as `''`, declarations as read. With our
 * writers (toOcelXml, writeOcelSqlite) it gives the log in the forms it was not published in.
 */
export function toOcelDocument(log: OcelLog): OcelJsonStrict {
  const iso = (ms: number) => new Date(ms).toISOString()
  const rel = (rs: readonly OcelRelationship[]) => rs.map((r) => ({ objectId: r.objectId, qualifier: r.qualifier ?? '' }))
  const types = (ds: OcelLog['eventTypes']) =>
    ds.map((d) => ({ name: d.name, attributes: d.attributes.map((a) => ({ name: a.name, type: attributeType(a.type) })) }))
  return {
    eventTypes: types(log.eventTypes),
    objectTypes: types(log.objectTypes),
    events: log.events.map((e) => ({
      id: e.id,
      type: e.type,
      time: iso(e.time),
      attributes: Object.entries(e.attributes).map(([name, value]) => ({ name, value: ocelValue(value) })),
      relationships: rel(e.relationships),
    })),
    objects: log.objects.map((o) => ({
      id: o.id,
      type: o.type,
      attributes: o.attributes.map((a) => ({ name: a.name, time: iso(a.time), value: ocelValue(a.value) })),
      relationships: rel(o.relationships),
    })),
  }
}
