/** Integration: the OCEL 2.0 JSON schemas (src/ocel/ocel-json.ts) against real logs on disk: the shared OCEL 2.0 logs when present, and the generated log written to a temp folder. */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { Compile } from 'typebox/compile'
import { OcelJson, OcelJsonStrict, OcelJsonTolerant } from '../../src/ocel/ocel-json.js'
import { itWithSharedOcel, OCEL_DIR } from '../helpers/fixtures.js'
import { writeGeneratedOcel } from '../helpers/generated-ocel.js'

const fixture = (path: string): unknown => JSON.parse(readFileSync(`${OCEL_DIR}${path}`, 'utf8'))

describe('OCEL 2.0 JSON schemas', () => {
  itWithSharedOcel('OcelJson accepts the official pm4py example (string values)', () => {
    expect(Compile(OcelJson).Check(fixture('raw/pm4py__ocel20_example.jsonocel'))).toBe(true)
  })

  itWithSharedOcel('OcelJson rejects a log converted from SQLite, whose values are typed', () => {
    expect(Compile(OcelJson).Check(fixture('derived/ocelescope__pallet-logistics-v0.9.ocel2.json'))).toBe(false)
  })

  itWithSharedOcel('OcelJsonTolerant accepts the same converted log', () => {
    expect(Compile(OcelJsonTolerant).Check(fixture('derived/ocelescope__pallet-logistics-v0.9.ocel2.json'))).toBe(true)
  })

  it('OcelJsonTolerant accepts the generated log; OcelJson rejects its typed values and zoneless times', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ocelog-schema-'))
    let doc: unknown
    try {
      doc = JSON.parse(readFileSync(writeGeneratedOcel(dir).json, 'utf8'))
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
    expect(Compile(OcelJsonTolerant).Check(doc)).toBe(true)
    const paths = Compile(OcelJson)
      .Errors(doc)
      .map((e) => e.instancePath)
    expect(paths).toContain('/events/0/attributes/1/value')
    expect(paths).toContain('/events/2/time')
    expect(paths).not.toContain('/events/0/time')
  })

  it('OcelJsonStrict rejects an event time that is not an RFC 3339 date-time', () => {
    const doc = {
      eventTypes: [],
      objectTypes: [],
      events: [{ id: 'e', type: 't', time: '2024-05-01 10:00:00', attributes: [], relationships: [] }],
      objects: [],
    }
    expect(
      Compile(OcelJsonStrict)
        .Errors(doc)
        .map((e) => e.instancePath),
    ).toEqual(['/events/0/time'])
  })

  it('OcelJsonStrict rejects an attribute type outside the five OCEL names', () => {
    const doc = { eventTypes: [{ name: 't', attributes: [{ name: 'a', type: 'int' }] }], objectTypes: [], events: [], objects: [] }
    expect(Compile(OcelJsonStrict).Check(doc)).toBe(false)
  })
})
