/**
 * The progress display of `ocelog import` (docs/import.md): a bar on a terminal, periodic lines
 * otherwise, through its three phases: reading the file, planning, sending.
 */
import { SingleBar } from 'cli-progress'
import type { RetryCause, RetryNotice } from '@ocelog/client'
import type { ImportProgress } from '../ocel/import/run.js'
import { describeRetry, retryBrief } from './retry-notice.js'

/** Seconds between progress lines when stderr is not a terminal. */
const LINE_EVERY_MS = 10_000

/** A phase of the import as the progress display shows it. */
export type Phase = 'reading' | 'planning' | 'sending'

/** What the display shows: the phase's progress (`value` of `total`, in `unit`), the events and objects so far. */
export interface Shown {
  value: number
  events: number
  objects: number
  failed: number
}

const UNITS: Record<Phase, string> = { reading: 'MB', planning: 'items', sending: 'items' }

/** Nothing shown yet: a phase's start. */
const NOTHING: Readonly<Shown> = Object.freeze({ value: 0, events: 0, objects: 0, failed: 0 })

/**
 * Progress display, from the first second: a bar on a terminal; otherwise a line when each phase
 * starts, every 10 s, and when it ends (its totals and rate), nothing with --json off a terminal.
 * Phases: reading the file into the staging file (MB, or KB under 10 MB), planning (events and objects planned),
 * sending (items answered). Each shows the events and objects so far, the rate of the phase and its ETA.
 * Sending starts while planning goes on (docs/import.md): the planning phase also shows the items
 * answered so far (`sent`), and the sending phase starts from them, its rate counted from the
 * moment sending began, not from the end of planning.
 */
export class ImportProgressDisplay {
  private retries = 0
  private lastRetry = ''
  private readonly lastRetryLine: Partial<Record<RetryCause, number>> = {}
  private phase: Phase = 'reading'
  private total = 0
  /** The phase's unit: UNITS', or the reading phase's KB for a small file. */
  private unit = UNITS.reading
  private phaseStarted = Date.now()
  private last: Shown = NOTHING
  /** What was answered so far: sending starts before planning ends, so the planning phase shows it and the sending phase starts from it. */
  private answered: Shown = NOTHING
  private readonly bar: SingleBar | null
  private lastLine = 0
  /** Whether a phase has started and its closing line is still to be written (off a terminal). */
  private open = false

  /** @param quiet no lines off a terminal (--json). */
  constructor(private readonly quiet: boolean) {
    this.bar = process.stderr.isTTY
      ? new SingleBar({
          stream: process.stderr,
          format:
            '{phase} |{bar}| {percentage}% {value}/{total} {unit} | {events} events | {objects} objects | {rate}{sent} | retries {retries}{last} | failed {failed} | ETA {eta_formatted}',
          barCompleteChar: '█',
          barIncompleteChar: '░',
          hideCursor: true,
          etaBuffer: 50,
          fps: 2,
        })
      : null
  }

  private sentText(separator: string): string {
    return this.phase === 'planning' ? `${separator}${String(this.answered.value)} items sent` : ''
  }

  private rate(s: Shown): string {
    const seconds = Math.max(0.001, (Date.now() - this.phaseStarted) / 1000)
    return this.phase === 'sending' ? `${String(Math.round(s.events / seconds))} events/s` : `${String(Math.round(s.value / seconds))} ${this.unit}/s`
  }

  private line(force: boolean): void {
    if (this.quiet || (!force && Date.now() - this.lastLine < LINE_EVERY_MS)) return
    this.lastLine = Date.now()
    const last = this.last
    const percent = Math.floor((last.value / Math.max(1, this.total)) * 100)
    process.stderr.write(
      `${this.phase}: ${String(last.value)}/${String(this.total)} ${this.unit} (${String(percent)}%), ${String(last.events)} events, ${String(last.objects)} objects, ${this.rate(last)}${this.sentText(', ')}, ${String(this.retries)} retries, ${String(last.failed)} failed\n`,
    )
  }

  /** Off a terminal, the line that ends the phase: its whole total when it `completed`, else where it stopped. */
  private close(completed: boolean): void {
    if (this.bar !== null || !this.open) return
    this.open = false
    if (completed) this.last = { ...this.last, value: this.total }
    this.line(true)
  }

  private payload() {
    return {
      phase: this.phase,
      unit: this.unit,
      events: this.last.events,
      objects: this.last.objects,
      rate: this.rate(this.last),
      sent: this.sentText(' | '),
      retries: this.retries,
      last: this.lastRetry,
      failed: this.last.failed,
    }
  }

  /**
   * Starts a phase of `phaseTotal` units (`options.unit`, default UNITS' for the phase), its rate
   * counted from `options.since` (ms since the epoch; default now). The sending phase starts from
   * what was answered so far (`answered`).
   */
  start(next: Phase, phaseTotal: number, options: { unit?: string; since?: number } = {}): void {
    // A phase starts once the one before it is done.
    this.close(true)
    this.open = true
    this.phase = next
    this.unit = options.unit ?? UNITS[next]
    this.total = phaseTotal
    this.phaseStarted = options.since ?? Date.now()
    this.last = next === 'sending' ? this.answered : NOTHING
    if (this.bar === null) this.line(true)
    else {
      this.bar.stop()
      this.bar.start(phaseTotal, this.last.value, this.payload())
    }
  }

  /** What was answered so far: shown as the sending phase's progress, or beside the planning phase's while planning goes on. */
  answeredSoFar(shown: Shown): void {
    this.answered = shown
    if (this.phase === 'sending') this.update(shown)
    else this.bar?.update({ sent: this.sentText(' | ') })
  }

  /** The phase's progress so far. */
  update(shown: Shown): void {
    this.last = shown
    if (this.bar === null) this.line(false)
    else this.bar.update(shown.value, this.payload())
  }

  /** A request the client retries: counted on the bar; off a terminal, a line per cause at most every LINE_EVERY_MS. */
  retry(notice: RetryNotice): void {
    this.retries += 1
    if (this.bar !== null) {
      this.lastRetry = ` (last: ${retryBrief(notice)})`
      this.bar.update({ retries: this.retries, last: this.lastRetry })
      return
    }
    // The first retry of each cause, then one line per cause every LINE_EVERY_MS.
    if (this.quiet || Date.now() - (this.lastRetryLine[notice.cause] ?? 0) < LINE_EVERY_MS) return
    this.lastRetryLine[notice.cause] = Date.now()
    process.stderr.write(`retrying: ${describeRetry(notice)}\n`)
  }

  /** Ends the display: the last phase's closing line (where it stopped), or the bar. Called again, it does nothing. */
  stop(): void {
    this.close(false)
    this.bar?.stop()
  }
}

/** The display of a run's progress (sending phase). */
export function sentOf(p: ImportProgress): Shown {
  return { value: p.eventsSent + p.upsertsSent + p.failed, events: p.eventsSent, objects: p.upsertsSent, failed: p.failed }
}
