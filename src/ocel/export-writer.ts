/**
 * `ocelog export` with bounded memory (docs/export.md#how-it-writes): the items of
 * `streamOcel` are written as they are read, in pages from the read models, so the exporter's memory
 * does not grow with the dataset.
 *
 * The type declarations come first in every form but depend on every value, so the items go first
 * to two scratch files (events, then objects: the order in which they are read) in a folder beside
 * the output (or in the system's temp folder for stdout), and the document is put together once the
 * declarations are known: the head, then each scratch file copied in the form's order, with
 * backpressure. JSON and XML are the same bytes as `JSON.stringify` of the whole document and
 * `toOcelXml`; SQLite is filled from the scratch files (NDJSON items) in transactions of
 * SQLITE_TRANSACTION_ITEMS items. The scratch folder is removed at the end, whatever happens.
 */
import { once } from 'node:events'
import { createReadStream, createWriteStream, mkdtempSync, renameSync, rmSync, type WriteStream } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { createInterface } from 'node:readline'
import { finished } from 'node:stream/promises'
import type { Writable } from 'node:stream'
import { Compile } from 'typebox/compile'
import { Type } from 'typebox'
import type { ReadModelQuery } from '../ports/read-model-query.js'
import { type ExportSummary, streamOcel } from './export.js'
import type { OcelForm } from './forms.js'
import { OcelEventStrict, OcelObjectStrict, OcelTypeDeclarationStrict } from './ocel-json.js'
import { finishPartialSqlite, OcelSqliteTables, openPartialSqlite } from './write-sqlite.js'
import { OcelXmlPieces } from './write-xml.js'

/** Items per SQLite transaction: bounds the rollback journal's and the page cache's growth, not the result. */
export const SQLITE_TRANSACTION_ITEMS = 5_000

/** Text kept before it is handed to a file stream, in UTF-16 code units (about 1 MB). */
const FLUSH_AT = 1 << 20

const checkEvent = Compile(OcelEventStrict)
const checkObject = Compile(OcelObjectStrict)
const checkDeclarations = Compile(Type.Array(OcelTypeDeclarationStrict))

/** The error of a document that is not OCEL 2.0 (a bug in Ocelog: the mapping only makes valid items). */
export class InvalidOcelError extends Error {}

function checked<T>(check: { Check(value: unknown): boolean; Errors(value: unknown): { instancePath: string; message: string }[] }, value: T, what: string): T {
  if (check.Check(value)) return value
  const first = check.Errors(value)[0]
  throw new InvalidOcelError(`${what}${first === undefined ? ': unknown reason' : `${first.instancePath || '/'}: ${first.message}`}`)
}

/** Writes `text` to `out`, waiting for 'drain' when its buffer is full. Rejects with the stream's error. */
async function write(out: Writable, text: string | Buffer): Promise<void> {
  if (!out.write(text)) await once(out, 'drain')
}

/** A scratch file that takes items' text in order, buffered, with backpressure. */
class PartFile {
  private readonly stream: WriteStream
  private chunks: string[] = []
  private size = 0
  /** Items added. */
  count = 0

  constructor(readonly path: string) {
    this.stream = createWriteStream(path)
  }

  async add(text: string): Promise<void> {
    this.chunks.push(text)
    this.size += text.length
    this.count += 1
    if (this.size >= FLUSH_AT) await this.flush()
  }

  private async flush(): Promise<void> {
    if (this.size === 0) return
    const text = this.chunks.join('')
    this.chunks = []
    this.size = 0
    await write(this.stream, text)
  }

  async close(): Promise<void> {
    await this.flush()
    this.stream.end()
    await finished(this.stream)
  }

  /** Copies the file to `out` in 1 MiB reads, with backpressure. */
  async copyTo(out: Writable): Promise<void> {
    for await (const chunk of createReadStream(this.path, { highWaterMark: 1 << 20 })) await write(out, chunk as Buffer)
  }

  /** The file's lines (one NDJSON item each). */
  lines(): AsyncIterable<string> {
    return createInterface({ input: createReadStream(this.path), crlfDelay: Number.POSITIVE_INFINITY })
  }
}

/** How an item becomes text in a scratch file, per form. */
interface ItemText {
  event(e: OcelEventStrict, targetTypes: readonly string[], first: boolean): string
  object(o: OcelObjectStrict, targetTypes: readonly string[], first: boolean): string
}

/** JSON.stringify(value, null, 2), every line after the first indented by `indent` more. */
function prettyAt(value: unknown, indent: string): string {
  return JSON.stringify(value, null, 2).replaceAll('\n', `\n${indent}`)
}

function jsonItems(pretty: boolean): ItemText {
  const item = (value: unknown, first: boolean) =>
    pretty ? `${first ? '' : ',\n'}    ${prettyAt(value, '    ')}` : `${first ? '' : ','}${JSON.stringify(value)}`
  return { event: (e, _t, first) => item(e, first), object: (o, _t, first) => item(o, first) }
}

const ndjsonItems: ItemText = { event: (e) => `${JSON.stringify(e)}\n`, object: (o) => `${JSON.stringify(o)}\n` }

export interface ExportFormOptions {
  /** Indent the JSON by 2 spaces. */
  pretty?: boolean
  /** Where the document goes without `out` (default process.stdout). */
  stdout?: Writable
}

/**
 * Exports dataset `datasetId` from the read models in `form` (json, xml, sqlite) to the file `out`
 * (atomically: `<out>.partial-<pid>` beside it, then renamed), or to stdout for json and xml, with
 * memory bounded whatever the dataset's size (see module comment; the scratch files need about the
 * document's size on disk, beside `out` or in the temp folder).
 * @returns the counts of the document.
 * @throws Error when `form` is sqlite without `out`; InvalidOcelError when an item is not OCEL 2.0
 *   (a bug); the XML writer's error for a character XML 1.0 cannot carry; the port's, SQLite's and
 *   Node's file errors. No partial output file is left behind (stdout may have received part).
 */
export async function exportOcelForm(
  query: ReadModelQuery,
  datasetId: string,
  form: OcelForm,
  out: string | undefined,
  options: ExportFormOptions = {},
): Promise<ExportSummary> {
  if (form === 'sqlite' && out === undefined) throw new Error('--format sqlite writes a binary file: give it with --out FILE')
  const scratch = mkdtempSync(join(out === undefined ? tmpdir() : dirname(out), '.ocelog-export-'))
  // Also when the process exits mid-way (a reader of stdout that left ends it with 141, src/cli/stdout.ts).
  const removeScratch = () => rmSync(scratch, { recursive: true, force: true })
  process.once('exit', removeScratch)
  try {
    const xml = new OcelXmlPieces()
    const text: ItemText =
      form === 'json'
        ? jsonItems(options.pretty === true)
        : form === 'xml'
          ? { event: (e, types) => xml.event(e, types), object: (o, types) => xml.object(o, types) }
          : ndjsonItems
    const events = new PartFile(join(scratch, 'events'))
    const objects = new PartFile(join(scratch, 'objects'))
    let streamed: Awaited<ReturnType<typeof streamOcel>>
    try {
      // Every page from one snapshot of the read models where the engine allows it (one as_of).
      streamed = await query.consistentRead(() =>
        streamOcel(query, datasetId, {
          event: (e, types) => events.add(text.event(checked(checkEvent, e, `event ${e.id} `), types, events.count === 0)),
          object: (o, types) => objects.add(text.object(checked(checkObject, o, `object ${o.id} `), types, objects.count === 0)),
        }),
      )
    } finally {
      await events.close()
      await objects.close()
    }
    checked(checkDeclarations, streamed.eventTypes, 'eventTypes ')
    checked(checkDeclarations, streamed.objectTypes, 'objectTypes ')

    if (form === 'sqlite' && out !== undefined) {
      await fillSqlite(out, streamed, events, objects)
      return streamed.summary
    }
    const partial = out === undefined ? null : `${out}.partial-${String(process.pid)}`
    const target: Writable = partial === null ? (options.stdout ?? process.stdout) : createWriteStream(partial)
    try {
      if (form === 'xml') {
        await write(target, xml.head(streamed.eventTypes, streamed.objectTypes))
        await write(target, xml.open('objects', objects.count === 0))
        await objects.copyTo(target)
        if (objects.count > 0) await write(target, xml.close('objects'))
        await write(target, xml.open('events', events.count === 0))
        await events.copyTo(target)
        if (events.count > 0) await write(target, xml.close('events'))
        await write(target, xml.end())
      } else {
        await writeJson(target, streamed, events, objects, options.pretty === true)
      }
      if (partial !== null && out !== undefined) {
        target.end()
        await finished(target)
        renameSync(partial, out)
      }
    } catch (error) {
      if (partial !== null) {
        target.destroy()
        rmSync(partial, { force: true })
      }
      throw error
    }
    return streamed.summary
  } finally {
    process.removeListener('exit', removeScratch)
    removeScratch()
  }
}

/** The JSON document: what JSON.stringify(doc) (or JSON.stringify(doc, null, 2)) gives, and a line feed. */
async function writeJson(
  target: Writable,
  streamed: Awaited<ReturnType<typeof streamOcel>>,
  events: PartFile,
  objects: PartFile,
  pretty: boolean,
): Promise<void> {
  if (!pretty) {
    await write(target, `{"eventTypes":${JSON.stringify(streamed.eventTypes)},"objectTypes":${JSON.stringify(streamed.objectTypes)},"events":[`)
    await events.copyTo(target)
    await write(target, '],"objects":[')
    await objects.copyTo(target)
    await write(target, ']}\n')
    return
  }
  const section = async (name: string, part: PartFile, last: boolean) => {
    if (part.count === 0) return write(target, `  "${name}": []${last ? '\n' : ',\n'}`)
    await write(target, `  "${name}": [\n`)
    await part.copyTo(target)
    await write(target, `\n  ]${last ? '\n' : ',\n'}`)
  }
  await write(target, `{\n  "eventTypes": ${prettyAt(streamed.eventTypes, '  ')},\n  "objectTypes": ${prettyAt(streamed.objectTypes, '  ')},\n`)
  await section('events', events, false)
  await section('objects', objects, true)
  await write(target, '}\n')
}

/** Fills the SQLite file `out` from the scratch files (objects, then events), SQLITE_TRANSACTION_ITEMS items per transaction. */
async function fillSqlite(out: string, streamed: Awaited<ReturnType<typeof streamOcel>>, events: PartFile, objects: PartFile): Promise<void> {
  const { db, partial } = openPartialSqlite(out)
  try {
    const tables = new OcelSqliteTables(db, streamed)
    let inTransaction = 0
    db.exec('BEGIN')
    const step = () => {
      inTransaction += 1
      if (inTransaction < SQLITE_TRANSACTION_ITEMS) return
      db.exec('COMMIT')
      db.exec('BEGIN')
      inTransaction = 0
    }
    for await (const line of objects.lines()) {
      tables.writeObject(JSON.parse(line) as OcelObjectStrict)
      step()
    }
    for await (const line of events.lines()) {
      tables.writeEvent(JSON.parse(line) as OcelEventStrict)
      step()
    }
    db.exec('COMMIT')
  } catch (error) {
    finishPartialSqlite(db, partial, out, error)
    throw error
  }
  finishPartialSqlite(db, partial, out)
}
