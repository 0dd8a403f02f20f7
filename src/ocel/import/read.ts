/**
 * Reads an OCEL 2.0 log file in any of the three standard forms into one OcelLog:
 * JSON (`.json`, `.jsonocel`), SQLite (`.sqlite`, `.db`) and XML (`.xml`, `.xmlocel`).
 * The form is taken from the first bytes of the file (`SQLite format 3`, `{`, `<`), so a file with
 * another extension is read too; an extension that contradicts the content is an error. JSON and XML
 * are read as streams (a chunk of the file, then one item, at a time).
 */
import Database from 'better-sqlite3'
import { closeSync, openSync, readSync, statSync } from 'node:fs'
import { open } from 'node:fs/promises'
import { extname } from 'node:path'
import { collector, OcelReadError, type OcelFormat, type OcelLog, type OcelSink, type ReadEnd } from './model.js'
import { jsonReader } from './read-json.js'
import { readOcelSqlite, type SqliteScratch, sqliteReader } from './read-sqlite.js'
import { xmlReader } from './read-xml.js'
import type { TimeZone } from './time.js'

const BY_EXTENSION: Record<string, OcelFormat> = {
  '.json': 'json',
  '.jsonocel': 'json',
  '.sqlite': 'sqlite',
  '.sqlite3': 'sqlite',
  '.db': 'sqlite',
  '.xml': 'xml',
  '.xmlocel': 'xml',
}

/** The form of a file from its first bytes, or null when it is none of the three. */
export function sniffFormat(head: Buffer): OcelFormat | null {
  if (head.subarray(0, 16).toString('latin1') === 'SQLite format 3\u0000') return 'sqlite'
  const text = head
    .toString('utf8')
    .replace(/^\uFEFF/, '')
    .trimStart()
  if (text.startsWith('{')) return 'json'
  if (text.startsWith('<')) return 'xml'
  return null
}

/**
 * The form of the file at `path`, from its first bytes, checked against its extension.
 * @throws OcelReadError when the file is none of the three forms or its extension says another;
 *   Node's file errors (ENOENT, …) as they are.
 */
export function formatOf(path: string): OcelFormat {
  const fd = openSync(path, 'r')
  const head = Buffer.alloc(512)
  let n: number
  try {
    n = readSync(fd, head, 0, head.length, 0)
  } finally {
    closeSync(fd)
  }
  const sniffed = sniffFormat(head.subarray(0, n))
  const ext = extname(path).toLowerCase()
  const named = BY_EXTENSION[ext]
  if (sniffed === null) {
    throw new OcelReadError(`${path}: not an OCEL 2.0 log in JSON, SQLite or XML form (the file starts with neither "{", "<" nor "SQLite format 3")`)
  }
  if (named !== undefined && named !== sniffed) throw new OcelReadError(`${path}: the extension ${ext} says ${named}, but the content is ${sniffed}`)
  return sniffed
}

function withPath<T>(path: string, read: () => T): T {
  try {
    return read()
  } catch (error) {
    if (error instanceof OcelReadError) throw new OcelReadError(`${path}: ${error.message}`)
    throw error
  }
}

/** Bytes read from the file at a time. */
const CHUNK_BYTES = 1 << 20

/**
 * Reads the OCEL 2.0 log at `path` into memory (tests, `ocelog export` checks; `ocelog import`
 * streams with streamOcelFile instead).
 * @param zone the zone of timestamps without one (`--timezone`).
 * @throws OcelReadError when the file is none of the three forms or cannot be read as its form;
 *   Node's file errors (ENOENT, …) as they are.
 */
export function readOcelFile(path: string, zone: TimeZone): OcelLog {
  const format = formatOf(path)
  return withPath(path, () => {
    if (format === 'sqlite') return readOcelSqlite(path, zone)
    const { sink, finish } = collector()
    const reader = format === 'json' ? jsonReader(zone, sink) : xmlReader(zone, sink)
    const fd = openSync(path, 'r')
    try {
      const buffer = Buffer.alloc(CHUNK_BYTES)
      for (let n = readSync(fd, buffer); n > 0; n = readSync(fd, buffer)) reader.write(buffer.subarray(0, n))
    } finally {
      closeSync(fd)
    }
    return finish(reader.end())
  })
}

/**
 * Reads the OCEL 2.0 log at `path` item by item into `sink`, a chunk of the file at a time (JSON and
 * XML) or a row at a time (SQLite, indexed in `scratch`, by default a database in memory): one item
 * in memory at a time.
 * @param onBytes called after each chunk with the bytes read so far and the file's size.
 * @param scratch where the SQLite reader indexes the file's rows (sqliteReader).
 * @returns what the reader found besides the items (see ReadEnd).
 * @throws as readOcelFile.
 */
export async function streamOcelFile(
  path: string,
  zone: TimeZone,
  sink: OcelSink,
  onBytes?: (read: number, size: number) => void,
  scratch?: SqliteScratch,
): Promise<ReadEnd> {
  const format = formatOf(path)
  const size = statSync(path).size
  if (format === 'sqlite') {
    const rows = scratch ?? { db: new Database(':memory:'), wrote: () => {} }
    try {
      const end = withPath(path, () => sqliteReader(path, zone, sink, rows))
      onBytes?.(size, size)
      return end
    } finally {
      if (scratch === undefined) rows.db.close()
    }
  }
  const reader = format === 'json' ? jsonReader(zone, sink) : xmlReader(zone, sink)
  // One buffer, read into again and again: the readers copy what they keep, and a new buffer per
  // chunk would be garbage that V8 collects late (external memory), a whole file's worth at times.
  const buffer = Buffer.alloc(CHUNK_BYTES)
  const file = await open(path, 'r')
  try {
    let read = 0
    for (let n = (await file.read(buffer, 0, CHUNK_BYTES, null)).bytesRead; n > 0; n = (await file.read(buffer, 0, CHUNK_BYTES, null)).bytesRead) {
      withPath(path, () => reader.write(buffer.subarray(0, n)))
      read += n
      onBytes?.(read, size)
    }
  } finally {
    await file.close()
  }
  return withPath(path, () => reader.end())
}
