/**
 * The repository's docs and comments stand alone, and every citation in them resolves (README §
 * Documentation):
 * - no tracked file cites a document that a clone does not have (the project's private
 *   specification, design and platform notes, or the shared folder beside the repository);
 * - every README section citation (README, the section sign, a heading) names a `##` or `###`
 *   heading of README.md, and every `docs/<page>.md` section citation (the page, the sign, a
 *   heading) starts a heading of that page;
 * - every `docs/<page>.md#<anchor>`, `bench/HISTORY.md#<anchor>`, `CONTRIBUTING.md#<anchor>` and
 *   `README.md#<anchor>`, and every relative link of a Markdown file, names a file and a heading
 *   that exist, by GitHub's anchor rules;
 * - every section sign follows the document it is a section of (README, a `.md` page, an RFC, a
 *   named specification or protocol): the sign and a heading alone name no document;
 * - no file cites an issue or pull request (by number, link or title): a comment states its reason
 *   or cites a doc section instead;
 * - every repository path a comment or doc names (`test/…`, `src/…`, `bench/…`, `scripts/…`,
 *   `docs/…`) exists.
 *
 * Reads the tracked files (`git ls-files`) of this checkout, nothing else; skipped, with the reason
 * printed, where the repository is not a git checkout.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, normalize } from 'node:path'
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

/** Files never scanned: lock files (registry text, not ours). */
const SKIPPED = new Set(['package-lock.json'])

/** The scanned files, each as its lines, read once. */
const TEXTS: readonly { file: string; lines: string[] }[] = (FILES ?? []).flatMap((file) => {
  const text = SKIPPED.has(file) ? null : textOf(file)
  return text === null ? [] : [{ file, lines: text.split('\n') }]
})

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

/** Any of FORBIDDEN: one pass over a line that cites none of them. */
const ANY_FORBIDDEN = new RegExp(FORBIDDEN.map((r) => r.pattern.source).join('|'), 'i')

/**
 * Files that may name the shared folder: they look for the optional real OCEL 2.0 logs there and
 * skip (or leave a row out) when it is absent. Each entry names the one rule it is exempt from.
 */
const ALLOWED: readonly { file: string; rule: string }[] = [{ file: 'test/helpers/fixtures.ts', rule: 'the shared folder' }]

/** A line of a comment, docstring or Markdown paragraph without its comment marker: how a wrapped citation goes on. */
function prose(line: string | undefined): string {
  return (line ?? '').replace(/^\s*(\/\*\*|\*|\/\/|#(?=\s)|"""|''')?\s*/, '')
}

/**
 * A line with the next `extra` lines' prose after it, blanks collapsed, and where the line itself
 * ends in that text: a citation that starts before `end` is this line's, wherever it ends.
 */
function withNext(lines: readonly string[], i: number, extra: number): { text: string; end: number } {
  const line = (lines[i] ?? '').replace(/\s+/g, ' ')
  let text = line
  for (let k = 1; k <= extra; k++) text += ` ${prose(lines[i + k])}`
  return { text: text.replace(/\s+/g, ' '), end: line.length }
}

/**
 * GitHub's anchor of a Markdown heading: lower case; inline code marks, links' targets and every
 * character but letters, marks, digits, `_`, `-` and spaces dropped; each space to `-`.
 */
function headingAnchor(heading: string): string {
  return heading
    .trim()
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-')
}

/** The headings of a Markdown file (`#` to `######`, outside fenced code), with their levels. */
function headingsOf(markdown: string): { level: number; text: string }[] {
  const headings: { level: number; text: string }[] = []
  let fenced = false
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced
    const m = fenced ? null : /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line)
    if (m?.[1] !== undefined && m[2] !== undefined) headings.push({ level: m[1].length, text: m[2] })
  }
  return headings
}

/** The anchors of a Markdown file's headings; a repeated anchor gets `-1`, `-2`, … as on GitHub. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>()
  for (const { text } of headingsOf(markdown)) {
    const base = headingAnchor(text)
    let anchor = base
    for (let n = 1; anchors.has(anchor); n++) anchor = `${base}-${String(n)}`
    anchors.add(anchor)
  }
  return anchors
}

/** Anchors of a tracked Markdown file by its path from the root, or null when there is no such file. */
const anchorCache = new Map<string, Set<string> | null>()
function anchorsFor(doc: string): Set<string> | null {
  if (!anchorCache.has(doc)) {
    const text = textOf(doc)
    anchorCache.set(doc, text === null ? null : anchorsOf(text))
  }
  return anchorCache.get(doc) ?? null
}

/** README.md's `##` and `###` headings: what a README section citation may name. */
const README_HEADINGS = headingsOf(textOf('README.md') ?? '')
  .filter((h) => h.level === 2 || h.level === 3)
  .map((h) => h.text)
  // The longest first, so that a heading that starts another is tried after it.
  .sort((a, b) => b.length - a.length)

/** The heading that the text after a README section citation's sign starts with, or null when it starts with none. */
function readmeHeadingCited(rest: string): string | null {
  return README_HEADINGS.find((h) => rest.startsWith(h) && !/^[\p{L}\p{N}]/u.test(rest.slice(h.length))) ?? null
}

/**
 * The words a page's section citation names, read after its sign: up to a `)`, `]`, `;`, `,` or
 * `:`, a sentence's end, or "and" and a second sign (two sections of one page).
 */
function sectionCited(rest: string): string {
  return (rest.split(new RegExp(`[)\\];,:]|\\.(?:\\s|$)|\\s+and\\s+${SECTION}`))[0] ?? '').trim()
}

/** Whether `heading` starts with the whole words of `phrase` (`Digests` names `Digests of the ingest history`). */
function headingStartsWith(heading: string, phrase: string): boolean {
  return phrase !== '' && heading.startsWith(phrase) && !/^[\p{L}\p{N}]/u.test(heading.slice(phrase.length))
}

/** Placeholders that a file shows as the form of a citation, not as a citation: file and cited text. */
const PLACEHOLDERS: readonly { file: string; cited: string }[] = [
  { file: 'CONTRIBUTING.md', cited: 'Heading' },
  { file: 'CONTRIBUTING.md', cited: ['test', 'unit', 'foo.test.ts'].join('/') },
]
const isPlaceholder = (file: string, cited: string): boolean => PLACEHOLDERS.some((p) => p.file === file && cited.startsWith(p.cited))

/**
 * What may stand before a section sign in its clause: README, a Markdown page, an RFC, or a specification,
 * protocol or standard named in the clause, or a quoted title.
 */
const DOCUMENT = /README|\.md\b|\bRFC \d+|specification|Protocol|XML 1\.0|"[^"]+"/

/** The clause a section sign stands in: the text before it back to an opening parenthesis, a `;`, a sentence's end or a comment's start. */
function clauseBefore(text: string): string {
  return text.split(/[(;]|\.\s|\/\*\*|"""/).pop() ?? ''
}

/** Citations of issues or pull requests, built from parts so that this file does not match them itself. */
const ISSUE: readonly { name: string; pattern: RegExp }[] = [
  { name: 'an issue number', pattern: new RegExp(['\\bissue', '\\s*#?\\d+\\b'].join(''), 'i') },
  { name: 'issue numbers', pattern: new RegExp(['\\bissues', '\\s+#\\d+'].join(''), 'i') },
  { name: 'an issue by its title', pattern: new RegExp(['\\bissue', '\\s+["\u201c]'].join(''), 'i') },
  { name: "an issue's text", pattern: new RegExp(['\\bthe issue', "'s\\b"].join(''), 'i') },
  { name: 'an issue or pull request link', pattern: new RegExp(['/(issues|pull)', '/\\d+'].join('')) },
  // `#12` after a space or bracket, not a colour (`color: #123`), an anchor (`x.md#12`), an entity (`&#12;`) or a heading (`## 12`).
  { name: 'a #number', pattern: new RegExp(['(?<=^|[\\s(\\[])(?<!:\\s*)', '#\\d+(?![\\w-])'].join('')) },
]

/** A repository path as comments and docs name them: from the root, or from the citing file's package. */
const REPO_PATH = /(?<![\w./$-])(?:test|src|bench|scripts|docs)\/[\w./-]*[\w-]\.(?:ts|mts|mjs|js|md|json|py|png)\b/g

describe.skipIf(NO_GIT)('docs and comments stand alone', () => {
  it('cite no document outside the repository', () => {
    const hits: string[] = []
    for (const { file, lines } of TEXTS) {
      lines.forEach((line, i) => {
        // A citation broken over two comment lines counts on its first line.
        const next = prose(lines[i + 1])
        // Every pattern is shorter than 40 characters: the seam of the two lines is enough to rule a line out.
        if (!ANY_FORBIDDEN.test(line) && !ANY_FORBIDDEN.test(`${line.trimEnd().slice(-40)} ${next.slice(0, 40)}`)) return
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

  it(`name only README headings that exist after "README ${SECTION}"`, () => {
    const dangling: string[] = []
    let cited = 0
    const citation = new RegExp(`README(?:\\.md)? ${SECTION}\\s*`, 'g')
    for (const { file, lines } of TEXTS) {
      lines.forEach((line, i) => {
        if (!line.includes('README')) return
        const { text, end } = withNext(lines, i, 2)
        for (const m of text.matchAll(citation)) {
          if (m.index >= end) continue
          cited++
          const rest = text.slice(m.index + m[0].length)
          if (readmeHeadingCited(rest) !== null || isPlaceholder(file, rest)) continue
          dangling.push(`${file}:${String(i + 1)}: ${m[0]}${rest.slice(0, 50)}…: no README heading starts it`)
        }
      })
    }
    expect(dangling, `README's ## and ### headings are: ${README_HEADINGS.join(' | ')}\n${dangling.join('\n')}`).toEqual([])
    expect(cited).toBeGreaterThan(0)
  })

  it(`name only headings that exist after "docs/<page>.md ${SECTION}"`, () => {
    const dangling: string[] = []
    let cited = 0
    const citation = new RegExp(`(?<![\\w./-])(docs\\/[a-z0-9-]+\\.md) ${SECTION}\\s*`, 'g')
    for (const { file, lines } of TEXTS) {
      lines.forEach((line, i) => {
        if (!line.includes(`.md ${SECTION}`)) return
        const { text, end } = withNext(lines, i, 2)
        for (const m of text.matchAll(citation)) {
          if (m.index >= end) continue
          cited++
          const headings = headingsOf(textOf(m[1] ?? '') ?? '').map((h) => h.text)
          const phrase = sectionCited(text.slice(m.index + m[0].length))
          if (headings.some((h) => headingStartsWith(h, phrase))) continue
          dangling.push(`${file}:${String(i + 1)}: ${m[0]}${phrase}: no heading of ${m[1] ?? ''} starts so`)
        }
      })
    }
    expect(dangling, dangling.join('\n')).toEqual([])
    expect(cited).toBeGreaterThan(0)
  })

  it('cite only Markdown pages and sections that exist', () => {
    const broken: string[] = []
    let cited = 0
    const citation = /(?<![\w./-])((?:docs\/[a-z0-9-]+|bench\/HISTORY|CONTRIBUTING|README)\.md)(#[\p{L}\p{N}_-]+)?/gu
    for (const { file, lines } of TEXTS) {
      lines.forEach((line, i) => {
        if (!line.includes('.md')) return
        for (const m of line.matchAll(citation)) {
          cited++
          const found = anchorsFor(m[1] ?? '')
          const where = `${file}:${String(i + 1)}: ${m[0]}`
          if (found === null) broken.push(`${where}: no such file`)
          else if (m[2] !== undefined && !found.has(m[2].slice(1))) broken.push(`${where}: no such section`)
        }
      })
    }
    expect(broken, broken.join('\n')).toEqual([])
    expect(cited).toBeGreaterThan(0)
  })

  it('link, in Markdown files, only to files and sections that exist', () => {
    const broken: string[] = []
    let links = 0
    for (const { file, lines } of TEXTS.filter((t) => t.file.endsWith('.md'))) {
      const dir = dirname(file)
      let fenced = false
      lines.forEach((line, i) => {
        if (/^\s*(```|~~~)/.test(line)) fenced = !fenced
        if (fenced) return
        for (const m of line.matchAll(/\]\(<?([^)\s#>]*)(#[^)\s>]+)?>?(?:\s+"[^"]*")?\)/g)) {
          const target = m[1] ?? ''
          if (/^[a-z]+:/.test(target)) continue
          links++
          const path = target === '' ? file : normalize(join(dir, decodeURIComponent(target)))
          const where = `${file}:${String(i + 1)}: ${m[0]}`
          if (path.startsWith('..') || !existsSync(join(ROOT, path))) {
            broken.push(`${where}: no such file`)
            continue
          }
          if (m[2] === undefined || !path.endsWith('.md')) continue
          if (!(anchorsFor(path) ?? new Set()).has(decodeURIComponent(m[2].slice(1)))) broken.push(`${where}: no such section`)
        }
      })
    }
    expect(broken, broken.join('\n')).toEqual([])
    expect(links).toBeGreaterThan(0)
  })

  it(`put the document before each ${SECTION}`, () => {
    const bare: string[] = []
    for (const { file, lines } of TEXTS) {
      lines.forEach((line, i) => {
        if (!line.includes(SECTION)) return
        for (const m of line.matchAll(new RegExp(SECTION, 'g'))) {
          const before = `${prose(lines[i - 1])} ${line.slice(0, m.index)}`
          if (DOCUMENT.test(clauseBefore(before))) continue
          bare.push(`${file}:${String(i + 1)}: ${line.trim().slice(0, 100)}`)
        }
      })
    }
    expect(bare, `name the document (README ${SECTION} Heading, docs/<page>.md#anchor, RFC n ${SECTION} x):\n${bare.join('\n')}`).toEqual([])
  })

  it('cite no issue or pull request', () => {
    const hits: string[] = []
    for (const { file, lines } of TEXTS) {
      lines.forEach((line, i) => {
        if (!/issue|#\d|\/pull\//i.test(line)) return
        for (const rule of ISSUE) {
          if (rule.pattern.test(line)) hits.push(`${file}:${String(i + 1)}: cites ${rule.name}: ${line.trim().slice(0, 100)}`)
        }
      })
    }
    expect(hits, `state the reason, or cite a doc section, instead:\n${hits.join('\n')}`).toEqual([])
  })

  it('name only repository paths that exist', () => {
    const stale: string[] = []
    let named = 0
    for (const { file, lines } of TEXTS) {
      // A path counts from the root or from any folder above the citing file (a package's own `src/`, `test/`).
      const bases = file
        .split('/')
        .slice(0, -1)
        .map((_, k, parts) => parts.slice(0, k + 1).join('/'))
      bases.unshift('')
      lines.forEach((line, i) => {
        if (!line.includes('/')) return
        for (const m of line.matchAll(REPO_PATH)) {
          named++
          if (isPlaceholder(file, m[0]) || bases.some((b) => existsSync(join(ROOT, b, m[0])))) continue
          stale.push(`${file}:${String(i + 1)}: ${m[0]}`)
        }
      })
    }
    expect(stale, stale.join('\n')).toEqual([])
    expect(named).toBeGreaterThan(0)
  })
})

describe('the citation rules', () => {
  it('make GitHub anchors of headings', () => {
    expect(headingAnchor('Authentication and scopes')).toBe('authentication-and-scopes')
    expect(headingAnchor('O2O relationships and attribute times')).toBe('o2o-relationships-and-attribute-times')
    expect(headingAnchor('Limits')).toBe('limits')
    expect(headingAnchor('`ocelog status` and /metrics')).toBe('ocelog-status-and-metrics')
    expect(headingAnchor('Backup, restore, verify and digests (embedded default)')).toBe('backup-restore-verify-and-digests-embedded-default')
    expect(headingAnchor('2026-11-25: memory, the disk, and paced load')).toBe('2026-11-25-memory-the-disk-and-paced-load')
    expect(headingAnchor('The large imports on `f9d763e`: the generated log and the running example ×30')).toBe(
      'the-large-imports-on-f9d763e-the-generated-log-and-the-running-example-30',
    )
    expect([...anchorsOf('# A\n## Memory\n```\n# not a heading\n```\n## Memory\n')]).toEqual(['a', 'memory', 'memory-1'])
  })

  it('read a README citation up to the heading it names', () => {
    expect(readmeHeadingCited('Exactly once and O2O relationships)')).toBe('Exactly once')
    expect(readmeHeadingCited('Read models.')).toBe('Read models')
    expect(readmeHeadingCited('Rate limits)')).toBeNull()
    expect(readmeHeadingCited('Operationsx')).toBeNull()
  })

  it(`read a page's ${SECTION} citation up to the heading it names`, () => {
    expect(sectionCited('Digests): one entry')).toBe('Digests')
    expect(sectionCited("Two bounds: the plan's critical path")).toBe('Two bounds')
    expect(sectionCited(`Verify and ${SECTION} Digests)`)).toBe('Verify')
    expect(sectionCited('A damaged file. The next')).toBe('A damaged file')
    expect(headingStartsWith('Digests of the ingest history', 'Digests')).toBe(true)
    expect(headingStartsWith('Verify', 'Verify')).toBe(true)
    expect(headingStartsWith('Memory and footprint', 'Mem')).toBe(false)
    expect(headingStartsWith('Memory', '')).toBe(false)
  })

  it(`tell a named ${SECTION} from a bare one`, () => {
    const named = (text: string): boolean => DOCUMENT.test(clauseBefore(text))
    expect(named('(RFC 9110 ')).toBe(true)
    expect(named('(RFC 9110 § 11.6.2 / ')).toBe(true)
    expect(named('durable (README ')).toBe(true)
    expect(named('(see docs/api.md ')).toBe(true)
    expect(named('(OCEL 2.0 specification, ')).toBe(true)
    expect(named('answers 422 (')).toBe(false)
    expect(named('/** ')).toBe(false)
    expect(named('(README § Read models; ')).toBe(false)
  })

  it('tell an issue citation from colours, anchors and headings', () => {
    const flagged = (line: string): boolean => ISSUE.some((r) => r.pattern.test(line))
    const n = String(12)
    expect(flagged(`see ${['issue', n].join(' ')}`)).toBe(true)
    expect(flagged(`(${['issue', `#${n}`].join(' ')}, item 3)`)).toBe(true)
    expect(flagged(`fixed in #${n}`)).toBe(true)
    expect(flagged(`https://github.com/o/r/${['issues', n].join('/')}`)).toBe(true)
    expect(flagged(`${['issue', '"Speed"'].join(' ')}, read models`)).toBe(true)
    expect(flagged('color: #123;')).toBe(false)
    expect(flagged("fill: '#000000'")).toBe(false)
    expect(flagged('[Limits](docs/api.md#limits)')).toBe(false)
    expect(flagged('## 12 items')).toBe(false)
    expect(flagged('caf&#233;')).toBe(false)
  })
})
