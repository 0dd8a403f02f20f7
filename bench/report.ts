/**
 * The benchmark's one table (issue 5): every figure beside its baseline, the ratio, and the
 * target of the issue with a pass/miss mark; printed as text or Markdown, and saved as JSON.
 */
import { readFileSync } from 'node:fs'
import { availableParallelism, loadavg, totalmem } from 'node:os'
import { table } from '../src/cli/context.js'

export type Mark = 'pass' | 'miss' | ''

export interface Row {
  figure: string
  value: string
  baseline: string
  ratio: string
  target: string
  mark: Mark
}

/** A target of the issue, checked on a measured number. */
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
