/**
 * The three standard forms of an OCEL 2.0 log that `ocelog export --format` writes (OCEL 2.0
 * standard: JSON, XML and SQLite serialisations), written from one whole JSON document in memory,
 * so that every form carries the same log. `ocelog export` itself streams (export-writer.ts) and
 * writes the same bytes (JSON, XML) and rows (SQLite) as these writers for the same document.
 */
import { renameSync, writeFileSync } from 'node:fs'
import type { OcelForm } from './forms.js'
import type { OcelJson } from './ocel-json.js'
import { writeOcelSqlite } from './write-sqlite.js'
import { toOcelXml } from './write-xml.js'

/** Writes `text` to `path` atomically: beside it first, then renamed, so a reader never sees half a file. */
function writeTextAtomically(path: string, text: string): void {
  const partial = `${path}.partial-${String(process.pid)}`
  writeFileSync(partial, text)
  renameSync(partial, path)
}

/**
 * Writes `doc` in `form` to the file `out` (atomically: a temp file beside it, then renamed), or to
 * stdout when `out` is undefined. JSON is one line, or indented by 2 spaces with `pretty`; XML is
 * indented (src/ocel/write-xml.ts); SQLite is the relational layout (src/ocel/write-sqlite.ts) and
 * needs a file.
 * @throws Error when `form` is sqlite and `out` is undefined (a binary file does not go to a terminal),
 *   and the writers' and Node's file errors.
 */
export function writeOcelForm(doc: OcelJson, form: OcelForm, out: string | undefined, pretty = false): void {
  if (form === 'sqlite') {
    if (out === undefined) throw new Error('--format sqlite writes a binary file: give it with --out FILE')
    writeOcelSqlite(doc, out)
    return
  }
  const text = form === 'xml' ? toOcelXml(doc) : `${pretty ? JSON.stringify(doc, null, 2) : JSON.stringify(doc)}\n`
  if (out === undefined) process.stdout.write(text)
  else writeTextAtomically(out, text)
}
