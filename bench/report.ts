/**
 * The benchmark's one table (docs/performance.md#method): every figure beside its baseline, the
 * ratio, and its target (docs/performance.md#targets) with a pass/miss mark; printed as text or
 * Markdown, and saved as JSON.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { availableParallelism, loadavg, totalmem } from 'node:os'
import { table } from '../src/cli/text.js'

export type Mark = 'pass' | 'miss' | ''

export interface Row {
  figure: string
  value: string
  baseline: string
  ratio: string
  target: string
  mark: Mark
}

/** A target of docs/performance.md#targets, checked on a measured number. */
export interface TargetCheck {
  name: string
  measured: number | null
  /** `min`: measured ≥ threshold passes; `max`: measured ≤ threshold passes. */
  kind: 'min' | 'max'
  threshold: number
  unit: string
  pass: boolean
}

export interface Machine {
  cpus: number
  model: string
  memoryGiB: number
  node: string
  /** 1-minute load average when the run started and ended: other work on the machine skews absolute numbers. */
  loadAverage: { start: number; end: number }
}

export function machineInfo(loadAtStart: number): Machine {
  let model = 'unknown'
  try {
    model = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim() ?? model
  } catch {
    // not Linux: leave unknown
  }
  return {
    cpus: availableParallelism(),
    model,
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    loadAverage: { start: loadAtStart, end: loadavg()[0] ?? 0 },
  }
}

/** Thousands with a thin grouping, e.g. 12,345; one decimal below 100. */
/** The median of `values` (the mean of the middle two for an even count; 0 for none). */
export function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b)
  const mid = (s.length - 1) / 2
  return ((s[Math.floor(mid)] ?? 0) + (s[Math.ceil(mid)] ?? 0)) / 2
}

export function num(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—'
  if (Math.abs(value) < 100) return (Math.round(value * 10) / 10).toLocaleString('en-US')
  return Math.round(value).toLocaleString('en-US')
}

export function ms(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : `${num(value)} ms`
}

export function ratio(value: number | null | undefined, base: number | null | undefined): string {
  if (value === null || value === undefined || base === null || base === undefined || base === 0) return '—'
  return `${(value / base).toFixed(2)}×`
}

/** Checks `measured` against a target; a figure that was not measured misses. */
export function check(name: string, measured: number | null, kind: 'min' | 'max', threshold: number, unit: string): TargetCheck {
  const pass = measured !== null && Number.isFinite(measured) && (kind === 'min' ? measured >= threshold : measured <= threshold)
  return { name, measured, kind, threshold, unit, pass }
}

export function markOf(c: TargetCheck): Mark {
  return c.pass ? 'pass' : 'miss'
}

/** The bench's table as it is built (docs/performance.md#method): its rows, and the target checks marked in them, in the order added. */
export class Table {
  readonly rows: Row[] = []
  readonly targets: TargetCheck[] = []

  /** Adds a row; one with a target check `c` is marked pass or miss, and `c` joins the targets. */
  add(figure: string, value: string, baseline = '', r = '', target = '', c?: TargetCheck): void {
    this.rows.push({ figure, value, baseline, ratio: r, target, mark: c === undefined ? '' : markOf(c) })
    if (c !== undefined) this.targets.push(c)
  }
}

const HEADER = ['figure', 'Ocelog', 'baseline', 'ratio', 'target', '']

/** The table as aligned text for a terminal. */
export function textTable(rows: readonly Row[]): string {
  return table([HEADER, ...rows.map((r) => [r.figure, r.value, r.baseline, r.ratio, r.target, r.mark])])
}

/** The same table in Markdown (for the README's Performance section). */
export function markdownTable(rows: readonly Row[]): string {
  const esc = (s: string) => s.replace(/\|/g, '\\|')
  const lines = [`| ${HEADER.join(' | ')} |`, `|${HEADER.map(() => '---').join('|')}|`]
  for (const r of rows) lines.push(`| ${[r.figure, r.value, r.baseline, r.ratio, r.target, r.mark].map(esc).join(' | ')} |`)
  return lines.join('\n')
}

/**
 * Prints the table, the machine (with the load average at start and now) and the targets met, then
 * writes everything as JSON to `<out>/<name>.json`.
 * @param extra fields of the JSON beside the table (options, measurements, …).
 * @returns the JSON file's path.
 */
export function printAndSave(
  rows: readonly Row[],
  targets: readonly TargetCheck[],
  o: { loadAtStart: number; startedMs: number; markdown: boolean; out: string; name: string },
  extra: Record<string, unknown>,
): string {
  const machine = machineInfo(o.loadAtStart)
  process.stdout.write(`\n${textTable(rows)}\n\n`)
  process.stdout.write(
    `machine: ${String(machine.cpus)} × ${machine.model}, ${String(machine.memoryGiB)} GiB, Node ${machine.node}; ` +
      `load average ${machine.loadAverage.start.toFixed(2)} → ${machine.loadAverage.end.toFixed(2)}\n`,
  )
  const missed = targets.filter((t) => !t.pass)
  process.stdout.write(
    `targets: ${String(targets.length - missed.length)} of ${String(targets.length)} met${missed.length > 0 ? `; missed: ${missed.map((t) => t.name).join('; ')}` : ''}\n`,
  )
  if (o.markdown) process.stdout.write(`\n${markdownTable(rows)}\n`)
  mkdirSync(o.out, { recursive: true })
  const file = join(o.out, `${o.name}.json`)
  const { options, ...rest } = extra
  writeFileSync(
    file,
    `${JSON.stringify({ startedAt: new Date(o.startedMs).toISOString(), machine, options, rows, targets, markdown: markdownTable(rows), ...rest }, null, 2)}\n`,
  )
  return file
}

/** `git rev-parse --short HEAD` in `root`, or `unknown` outside a git checkout: the commit a result file names. */
export function commitOf(root: string): string {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim()
  } catch {
    return 'unknown'
  }
}

/**
 * A result's file name (without `.json`) in `dir` that no earlier run took: `base`, else `base-2`,
 * `base-3`, … (docs/performance.md#method: no result is overwritten).
 */
export function freeResultName(dir: string, base: string): string {
  for (let n = 1; ; n++) {
    const name = n === 1 ? base : `${base}-${String(n)}`
    if (!existsSync(join(dir, `${name}.json`))) return name
  }
}
