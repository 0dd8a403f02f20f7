/**
 * The repository's docs and comments stand alone: no tracked file cites a document that a clone
 * does not have (the project's private specification, design and platform notes, or the shared
 * folder beside the repository), and every `docs/<topic>.md#<section>` that a file cites exists.
 * A comment cites a README or docs section, the OpenAPI document, or a public standard (RFC 9457,
 * OCEL 2.0) instead (README § Documentation).
 *
 * Reads the tracked files (`git ls-files`) of this checkout; skipped, with the reason printed, where
 * the repository is not a git checkout.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

/** Tracked files, or null when this is no git checkout. */
function trackedFiles(): string[] | null {
  try {
    return execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' })
      .split('\0')
      .filter((f) => f !== '')
  } catch {
    return null
  }
}

const FILES = trackedFiles()
const NO_GIT = FILES === null
if (NO_GIT) console.info(`skip: doc citations: ${ROOT} is not a git checkout (git ls-files failed)`)

/** Text of a tracked file, or null for binary files (a NUL byte) and files absent from the work tree. */
function textOf(file: string): string | null {
  const path = join(ROOT, file)
  if (!existsSync(path)) return null
  const text = readFileSync(path, 'utf8')
  return text.includes('\0') ? null : text
}

// Built from parts, so that this file does not cite them itself.
const SECTION = '\u00a7'
const FORBIDDEN: readonly { name: string; pattern: RegExp }[] = [
  { name: `"spec ${SECTION}"`, pattern: new RegExp(`spec ${SECTION}`) },
  { name: 'the specification file', pattern: new RegExp(['spec', 'ingestion-api\\.md'].join('/')) },
  { name: 'the design notes', pattern: new RegExp(['DESIGN', 'md'].join('\\.')) },
  { name: 'the platform notes', pattern: new RegExp(['PLATFORM', 'md'].join('\\.')) },
  { name: 'the shared folder', pattern: new RegExp(['\\.\\.', 'shared'].join('/')) },
  { name: 'a contract called "spec"', pattern: new RegExp(`\\bthe ${'spec'}('s)?\\b`, 'i') },
  { name: 'the private specification by title', pattern: new RegExp(`ingestion API ${'specification'}`, 'i') },
]

/**
 * Files that may name the shared folder: they look for the optional real OCEL 2.0 logs there and
 * skip (or leave a row out) when it is absent. Each entry names the one rule it is exempt from.
 */
const ALLOWED: readonly { file: string; rule: string }[] = [{ file: 'test/helpers/fixtures.ts', rule: 'the shared folder' }]

/** Files never scanned: lock files (registry text, not ours). */
const SKIPPED = new Set(['package-lock.json'])

/** GitHub's anchor of a Markdown heading: lower case, punctuation other than `-` and `_` dropped, spaces to `-`. */
function headingAnchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-')
}

/** The anchors of a Markdown file's headings (`#` to `######`, outside fenced code). */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>()
  let fenced = false
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced
    const m = fenced ? null : /^#{1,6}\s+(.*)$/.exec(line)
    if (m?.[1] !== undefined) anchors.add(headingAnchor(m[1]))
  }
  return anchors
}

describe.skipIf(NO_GIT)('docs and comments stand alone', () => {
  it('cites no document outside the repository', () => {
    const hits: string[] = []
    for (const file of FILES ?? []) {
      if (SKIPPED.has(file)) continue
      const text = textOf(file)
      if (text === null) continue
      const lines = text.split('\n')
      lines.forEach((line, i) => {
        // A citation broken over two comment lines ("(spec" / " * § Limits") counts on its first line.
        const next = (lines[i + 1] ?? '').replace(/^\s*(\*|\/\/|#)?\s*/, '')
        const joined = `${line.trimEnd()} ${next}`
        for (const rule of FORBIDDEN) {
          const own = rule.pattern.test(line)
          if (!own && (rule.pattern.test(next) || !rule.pattern.test(joined))) continue
          if (ALLOWED.some((a) => a.file === file && a.rule === rule.name)) continue
          hits.push(`${file}:${String(i + 1)}: cites ${rule.name}: ${line.trim().slice(0, 120)}`)
        }
      })
    }
    expect(hits, `cite a README or docs/ section or a public standard instead:\n${hits.join('\n')}`).toEqual([])
  })

  it('cites only docs/ files and sections that exist', () => {
    const anchors = new Map<string, Set<string> | null>()
    const anchorsFor = (doc: string): Set<string> | null => {
      if (!anchors.has(doc)) {
        const text = textOf(doc)
        anchors.set(doc, text === null ? null : anchorsOf(text))
      }
      return anchors.get(doc) ?? null
    }
    const broken: string[] = []
    let cited = 0
    for (const file of FILES ?? []) {
      if (SKIPPED.has(file)) continue
      const text = textOf(file)
      if (text === null) continue
      text.split('\n').forEach((line, i) => {
        for (const m of line.matchAll(/\bdocs\/([a-z0-9-]+\.md)(#[\p{L}\p{N}_-]+)?/gu)) {
          cited++
          const doc = `docs/${m[1] ?? ''}`
          const found = anchorsFor(doc)
          const where = `${file}:${String(i + 1)}: ${m[0]}`
          if (found === null) broken.push(`${where}: no such file`)
          else if (m[2] !== undefined && !found.has(m[2].slice(1))) broken.push(`${where}: no such section`)
        }
      })
    }
    expect(broken, broken.join('\n')).toEqual([])
    expect(cited).toBeGreaterThan(0)
  })

  it('links, in README.md and docs/, only to Markdown files and sections that exist', () => {
    const broken: string[] = []
    let links = 0
    for (const file of (FILES ?? []).filter((f) => f === 'README.md' || (f.startsWith('docs/') && f.endsWith('.md')))) {
      const text = textOf(file) ?? ''
      const dir = dirname(file)
      text.split('\n').forEach((line, i) => {
        for (const m of line.matchAll(/\]\(([^)\s#]*)(#[^)\s]+)?\)/g)) {
          const target = m[1] ?? ''
          if (/^[a-z]+:/.test(target)) continue
          links++
          const path = target === '' ? file : join(dir, target)
          const where = `${file}:${String(i + 1)}: ${m[0]}`
          if (!existsSync(join(ROOT, path))) {
            broken.push(`${where}: no such file`)
            continue
          }
          if (m[2] === undefined || !path.endsWith('.md')) continue
          if (!anchorsOf(textOf(path) ?? '').has(m[2].slice(1))) broken.push(`${where}: no such section`)
        }
      })
    }
    expect(broken, broken.join('\n')).toEqual([])
    expect(links).toBeGreaterThan(0)
  })
})

describe('headingAnchor', () => {
  it('makes GitHub anchors of headings', () => {
    expect(headingAnchor('Authentication and scopes')).toBe('authentication-and-scopes')
    expect(headingAnchor('O2O relationships and attribute times')).toBe('o2o-relationships-and-attribute-times')
    expect(headingAnchor('Limits')).toBe('limits')
    expect(headingAnchor('`ocelog status` and /metrics')).toBe('ocelog-status-and-metrics')
  })
})
