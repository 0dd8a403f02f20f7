/**
 * The on-disk staging of `ocelog import` (README § Importing OCEL 2.0 logs, docs/import.md): a
 * scratch SQLite file that holds what the import plan needs, so that memory does not grow with the
 * file. The reader hands every event and object to `sink()`, which appends it, in file order, to:
 * - `event (seq, id, type, time, attributes, relationships)`: time in ms since the epoch, attributes
 *   as JSON `{name: value}`, E2O as JSON `[[object id, qualifier | null], …]`;
 * - `object (seq, id, type, attributes, relationships)`: the attribute history as JSON
 *   `[[name, time, value], …]` in file order, O2O as E2O;
 * - `action (time, seq, payload)`, filled by the planner (staged-plan.ts): every upsert and event
 *   to send, with its idempotency key, indexed on (time, seq) so that it is read back in sending
 *   order, a page at a time.
 * Values are staged as read (text not yet typed: a declaration may come after its items); the
 * declarations themselves are few and kept in memory. The file is written without journal or sync
 * (it is scratch: a crash leaves nothing to recover), and removed by `remove()`.
 */
import Database from 'better-sqlite3'
import { randomBytes } from 'node:crypto'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import type { SqliteScratch } from './read-sqlite.js'
import type { AttributeValue, OcelEvent, OcelObject, OcelRelationship, OcelSink, OcelTypeDeclaration } from './model.js'

/** Rows written per transaction. */
const ROWS_PER_TRANSACTION = 20_000

type Link = [string, string | null]

function links(rs: readonly OcelRelationship[]): string {
  return JSON.stringify(rs.map((r): Link => [r.objectId, r.qualifier]))
}

function relationshipsOf(json: string): OcelRelationship[] {
  return (JSON.parse(json) as Link[]).map(([objectId, qualifier]) => ({ objectId, qualifier }))
}

/** Counts of the log as staged, for the summary (README § Importing OCEL 2.0 logs). */
export interface StagedCounts {
  events: number
  objects: number
  e2o: number
  o2o: number
  objectAttributeValues: number
  eventTypesUsed: Set<string>
  objectTypesUsed: Set<string>
}

/** A staging file (see module comment). */
export class Staging {
  readonly db: Database.Database
  readonly eventTypes: OcelTypeDeclaration[] = []
  readonly objectTypes: OcelTypeDeclaration[] = []
  readonly counts: StagedCounts = { events: 0, objects: 0, e2o: 0, o2o: 0, objectAttributeValues: 0, eventTypesUsed: new Set(), objectTypesUsed: new Set() }
  private pending = 0
  /** Whether text values are still to be typed by their declaration (ReadEnd.typeText), set when reading ends. */
  typeText = true
  /**
   * The earliest time of a staged object's first upsert (ms): its earliest attribute time, or −∞
   * for an object without attributes (its one upsert has no time); +∞ while no object is staged.
   */
  firstObjectTime = Number.POSITIVE_INFINITY

  /**
   * Creates a new staging file in `dir` (`ocelog-import-<random>.sqlite`).
   * @throws SQLite's errors when the file cannot be created.
   */
  constructor(dir: string) {
    this.path = join(dir, `ocelog-import-${randomBytes(6).toString('hex')}.sqlite`)
    this.db = new Database(this.path)
    this.db.pragma('journal_mode = OFF')
    this.db.pragma('synchronous = OFF')
    this.db.pragma('temp_store = FILE')
    // Memory of SQLite itself: a 4 MB page cache (better-sqlite3's default is 16 MB), and index builds
    // sorted in this thread (worker threads of the sorter each take a cache's worth).
    this.db.pragma('cache_size = -4000')
    this.db.pragma('threads = 0')
    this.db.exec(`
      CREATE TABLE event (seq INTEGER PRIMARY KEY, id TEXT NOT NULL, type TEXT NOT NULL, time INTEGER NOT NULL, attributes TEXT NOT NULL, relationships TEXT NOT NULL);
      CREATE TABLE object (seq INTEGER PRIMARY KEY, id TEXT NOT NULL, type TEXT NOT NULL, attributes TEXT NOT NULL, relationships TEXT NOT NULL);
      CREATE TABLE action (time INTEGER NOT NULL, seq INTEGER NOT NULL, payload TEXT NOT NULL);
    `)
    this.db.exec('BEGIN')
  }

  readonly path: string

  /** Ends the open transaction every ROWS_PER_TRANSACTION rows, so that SQLite's cache stays small. */
  wrote(): void {
    this.pending += 1
    if (this.pending < ROWS_PER_TRANSACTION) return
    this.pending = 0
    this.db.exec('COMMIT; BEGIN')
  }

  /** Commits what is written. */
  commit(): void {
    if (this.db.inTransaction) this.db.exec('COMMIT')
    this.pending = 0
  }

  /** Where the SQLite reader indexes the rows of a SQLite input (its `src_*` tables, in this file). */
  scratch(): SqliteScratch {
    return { db: this.db, wrote: () => this.wrote() }
  }

  /** The sink a reader writes the log into. */
  sink(): OcelSink {
    const insertEvent = this.db.prepare<[string, string, number, string, string]>(
      'INSERT INTO event (id, type, time, attributes, relationships) VALUES (?, ?, ?, ?, ?)',
    )
    const insertObject = this.db.prepare<[string, string, string, string]>('INSERT INTO object (id, type, attributes, relationships) VALUES (?, ?, ?, ?)')
    const c = this.counts
    return {
      eventType: (d) => this.eventTypes.push(d),
      objectType: (d) => this.objectTypes.push(d),
      event: (e) => {
        insertEvent.run(e.id, e.type, e.time, JSON.stringify(e.attributes), links(e.relationships))
        c.events += 1
        c.e2o += e.relationships.length
        c.eventTypesUsed.add(e.type)
        this.wrote()
      },
      object: (o) => {
        insertObject.run(o.id, o.type, JSON.stringify(o.attributes.map((a) => [a.name, a.time, a.value])), links(o.relationships))
        c.objects += 1
        c.o2o += o.relationships.length
        c.objectAttributeValues += o.attributes.length
        c.objectTypesUsed.add(o.type)
        if (o.attributes.length === 0) this.firstObjectTime = Number.NEGATIVE_INFINITY
        for (const a of o.attributes) if (a.time < this.firstObjectTime) this.firstObjectTime = a.time
        this.wrote()
      },
    }
  }

  /** The id and type of staged objects with seq > `after`, `limit` at most, in file order. */
  idPage(after: number, limit: number): { seq: number; id: string; type: string }[] {
    return this.db
      .prepare<[number, number], { seq: number; id: string; type: string }>('SELECT seq, id, type FROM object WHERE seq > ? ORDER BY seq LIMIT ?')
      .all(after, limit)
  }

  /** The staged objects with seq > `after`, `limit` at most, in file order. */
  objectPage(after: number, limit: number): { seq: number; object: OcelObject }[] {
    const rows = this.db
      .prepare<[number, number], { seq: number; id: string; type: string; attributes: string; relationships: string }>(
        'SELECT seq, id, type, attributes, relationships FROM object WHERE seq > ? ORDER BY seq LIMIT ?',
      )
      .all(after, limit)
    return rows.map((r) => ({
      seq: r.seq,
      object: {
        id: r.id,
        type: r.type,
        attributes: (JSON.parse(r.attributes) as [string, number, AttributeValue][]).map(([name, time, value]) => ({ name, time, value })),
        relationships: relationshipsOf(r.relationships),
      },
    }))
  }

  /** The staged events with seq > `after`, `limit` at most, in file order. */
  eventPage(after: number, limit: number): { seq: number; event: OcelEvent }[] {
    const rows = this.db
      .prepare<[number, number], { seq: number; id: string; type: string; time: number; attributes: string; relationships: string }>(
        'SELECT seq, id, type, time, attributes, relationships FROM event WHERE seq > ? ORDER BY seq LIMIT ?',
      )
      .all(after, limit)
    return rows.map((r) => ({
      seq: r.seq,
      event: {
        id: r.id,
        type: r.type,
        time: r.time,
        attributes: JSON.parse(r.attributes) as Record<string, unknown>,
        relationships: relationshipsOf(r.relationships),
      },
    }))
  }

  /** Closes the file and deletes it. */
  remove(): void {
    this.close()
    rmSync(this.path, { force: true })
  }

  /** Closes the file, keeping it (a failed run names it). */
  close(): void {
    if (this.db.open) this.db.close()
  }
}
