/**
 * A small OCEL 2.0 log (JSON) whose names, ids, qualifiers, attribute names and values carry the
 * control characters U+0000 and U+0001, which the API accepts in every string (docs/api.md#limits)
 * and PostgreSQL's `text` and `jsonb` cannot hold as they are (docs/read-models.md#the-read-models-on-postgresql).
 * Names that differ only by them (`Pay`, `Pay\u0000`, `Pay\u0001`, `Pay\u0002`) test that every
 * read orders them as the embedded default does, by their bytes. Its numbers, for assertions: 6
 * events (4 event types), 4 objects (2 object types), 2 O2O relationships.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'

const NUL = '\u0000'
const SOH = '\u0001'

/** Names of the log's types, objects and attributes. */
const ORDER = `or${NUL}der`
const ITEM = `it${SOH}em`
const STATUS = `st${NUL}atus`
const PAY = ['Pay', `Pay${NUL}`, `Pay${SOH}`, `Pay\u0002`] as const

/** The log, as the OCEL 2.0 JSON format writes it. */
function controlCharactersLog(): unknown {
  const order = (n: number) => `o${NUL}${String(n)}`
  const item = (n: number) => `i${SOH}${String(n)}${NUL}`
  const at = (minute: number) => `2024-05-01T08:${String(minute).padStart(2, '0')}:00Z`
  return {
    eventTypes: [{ name: `Cre${NUL}ate`, attributes: [{ name: `no${NUL}te`, type: 'string' }] }, ...PAY.map((name) => ({ name, attributes: [] }))],
    objectTypes: [
      { name: ORDER, attributes: [{ name: STATUS, type: 'string' }] },
      { name: ITEM, attributes: [{ name: `we${SOH}ight`, type: 'string' }] },
    ],
    events: [
      {
        id: `e${NUL}1`,
        type: `Cre${NUL}ate`,
        time: at(0),
        attributes: [{ name: `no${NUL}te`, value: `fi${NUL}rst${SOH}` }],
        relationships: [
          { objectId: order(1), qualifier: `ta${NUL}rget` },
          { objectId: item(1), qualifier: `li${SOH}ne` },
        ],
      },
      ...PAY.map((type, i) => ({
        id: `e${NUL}${String(i + 2)}`,
        type,
        time: at(i + 1),
        attributes: [],
        relationships: [
          { objectId: order(i % 2 === 0 ? 1 : 2), qualifier: `ta${NUL}rget` },
          { objectId: item(i % 2), qualifier: '' },
        ],
      })),
      { id: `e${NUL}6`, type: `Cre${NUL}ate`, time: at(9), attributes: [], relationships: [{ objectId: order(2), qualifier: `ta${NUL}rget` }] },
    ],
    objects: [
      {
        id: order(1),
        type: ORDER,
        attributes: [
          { name: STATUS, time: '1970-01-01T00:00:00Z', value: `op${NUL}en` },
          { name: STATUS, time: at(3), value: `pa${SOH}id${NUL}` },
        ],
        relationships: [{ objectId: item(1), qualifier: `con${NUL}tains` }],
      },
      { id: order(2), type: ORDER, attributes: [{ name: STATUS, time: at(2), value: NUL }], relationships: [{ objectId: item(0), qualifier: SOH }] },
      { id: item(0), type: ITEM, attributes: [{ name: `we${SOH}ight`, time: at(1), value: `1${NUL}` }], relationships: [] },
      { id: item(1), type: ITEM, attributes: [], relationships: [] },
    ],
  }
}

/** Writes the log as OCEL 2.0 JSON into `dir` and returns the file's path. */
export function writeControlCharactersOcel(dir: string): string {
  const path = join(dir, 'control-characters.jsonocel')
  writeFileSync(path, JSON.stringify(controlCharactersLog(), null, 2))
  return path
}
