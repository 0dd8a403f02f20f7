/**
 * Reads an OCEL 2.0 log file in any of the three standard forms into one OcelLog:
 * JSON (`.json`, `.jsonocel`), SQLite (`.sqlite`, `.db`) and XML (`.xml`, `.xmlocel`).
 * The form is taken from the first bytes of the file (`SQLite format 3`, `{`, `<`), so a file with
 * another extension is read too; an extension that contradicts the content is an error.
 */
import { closeSync, openSync, readFileSync, readSync } from 'node:fs'
import { extname } from 'node:path'
import { OcelReadError, type OcelFormat, type OcelLog } from './model.js'
import { readOcelJson } from './read-json.js'
import { readOcelSqlite } from './read-sqlite.js'
import { readOcelXml } from './read-xml.js'
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
 * Reads the OCEL 2.0 log at `path`.
 * @param zone the zone of timestamps without one (`--timezone`).
 * @throws OcelReadError when the file is none of the three forms or cannot be read as its form;
 *   Node's file errors (ENOENT, …) as they are.
 */
export function readOcelFile(path: string, zone: TimeZone): OcelLog {
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
  const context = (error: unknown): never => {
    if (error instanceof OcelReadError) throw new OcelReadError(`${path}: ${error.message}`)
    throw error
  }
  try {
    if (sniffed === 'sqlite') return readOcelSqlite(path, zone)
    const text = readFileSync(path, 'utf8')
    return sniffed === 'json' ? readOcelJson(text, zone) : readOcelXml(text, zone)
  } catch (error) {
    return context(error)
  }
}
