/**
 * A real OCEL 2.0 JSON log repeated into a large one, as a user grows a dataset to try Ocelog at
 * scale: `copies` copies of the log, the ids of copy k suffixed `#k` (events, objects, and the E2O
 * and O2O that name them) and its times shifted by k times the log's span, rounded up to whole
 * days, so that copies follow one another. Attribute values timed before 1970-01-02 are initial
 * values (the OCEL 2.0 convention of the epoch) and keep their time. For the bench's row of the
 * running example imported 30 times over (546,330 events; `npm run bench`, docs/performance.md).
 * The source log is read whole (the running example is 7 MB); the copies are written as a stream.
 */
import { readFileSync } from 'node:fs'
import { BufferedFile } from './buffered-file.js'

/** What the written log holds. */
export interface RepeatedOcelCounts {
  events: number
  objects: number
  bytes: number
}

interface Relationship {
  objectId: string
  qualifier?: string
}

interface SourceLog {
  eventTypes: unknown[]
  objectTypes: unknown[]
  events: { id: string; time: string; relationships?: Relationship[] }[]
  objects: { id: string; attributes?: { time: string }[]; relationships?: Relationship[] }[]
}

const DAY_MS = 86_400_000
/** Attribute values timed before this are initial values and keep their time. */
const INITIAL_BEFORE_MS = Date.UTC(1970, 0, 2)

function isSourceLog(value: unknown): value is SourceLog {
  if (typeof value !== 'object' || value === null) return false
  const v = value as Record<string, unknown>
  return Array.isArray(v.events) && Array.isArray(v.objects) && Array.isArray(v.eventTypes) && Array.isArray(v.objectTypes)
}

/**
 * Writes `copies` copies of the OCEL 2.0 JSON log at `source` into `path` (see module comment).
 * @throws Error when `source` is not an OCEL 2.0 JSON log (no events, objects or type lists), or a time in it is not a date-time.
 */
export function writeRepeatedOcelJson(source: string, path: string, copies: number): RepeatedOcelCounts {
  const parsed: unknown = JSON.parse(readFileSync(source, 'utf8'))
  if (!isSourceLog(parsed)) throw new Error(`${source}: not an OCEL 2.0 JSON log (events, objects, eventTypes and objectTypes lists)`)
  const times = parsed.events.map((e) => Date.parse(e.time))
  if (times.some(Number.isNaN)) throw new Error(`${source}: an event's time is not a date-time`)
  const span = Math.ceil((Math.max(...times) - Math.min(...times) + 1) / DAY_MS) * DAY_MS
  const shifted = (time: string, k: number) => {
    const ms = Date.parse(time)
    return ms < INITIAL_BEFORE_MS ? time : new Date(ms + k * span).toISOString()
  }
  const renamed = (rs: Relationship[] | undefined, k: number) => (rs ?? []).map((r) => ({ ...r, objectId: `${r.objectId}#${String(k)}` }))
  const counts: RepeatedOcelCounts = { events: 0, objects: 0, bytes: 0 }
  const file = new BufferedFile(path)
  const put = (text: string) => file.put(text)
  try {
    put(`{"eventTypes":${JSON.stringify(parsed.eventTypes)},"objectTypes":${JSON.stringify(parsed.objectTypes)},"objects":[`)
    for (let k = 0; k < copies; k++) {
      for (const o of parsed.objects) {
        const copy = {
          ...o,
          id: `${o.id}#${String(k)}`,
          attributes: (o.attributes ?? []).map((a) => ({ ...a, time: shifted(a.time, k) })),
          relationships: renamed(o.relationships, k),
        }
        put(`${counts.objects === 0 ? '\n' : ',\n'}${JSON.stringify(copy)}`)
        counts.objects += 1
      }
    }
    put('],"events":[')
    for (let k = 0; k < copies; k++) {
      for (const e of parsed.events) {
        const copy = { ...e, id: `${e.id}#${String(k)}`, time: shifted(e.time, k), relationships: renamed(e.relationships, k) }
        put(`${counts.events === 0 ? '\n' : ',\n'}${JSON.stringify(copy)}`)
        counts.events += 1
      }
    }
    put(']}\n')
  } finally {
    file.close()
  }
  counts.bytes = file.bytes
  return counts
}
