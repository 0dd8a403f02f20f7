/**
 * Timestamps of OCEL 2.0 logs, as found in real files: RFC 3339 with `Z` or an offset, the SQLite
 * layout's `YYYY-MM-DD HH:MM:SS` without a zone, fractions of a second of any length, and the XML
 * layout's `time="0"` (seconds since the epoch). A timestamp without a zone is read as wall-clock
 * time in a chosen zone (`ocelog import --timezone`, default UTC); the caller counts those.
 * Pure: the only environment used is Intl's time-zone database.
 */
import { canonicalUtcMs, civilMs, daysInMonth } from '../../core/timestamp.js'

/** A zone in which wall-clock times without a zone are read. */
export interface TimeZone {
  /** As given: `UTC`, `+02:00`, `Europe/Berlin`. */
  readonly label: string
  /**
   * The instant of a wall-clock time in this zone.
   * @param wallMs the wall-clock time written as if it were UTC (civilMs of its fields).
   * @returns ms since the epoch. In a DST gap the time is read with the offset before the gap.
   */
  toUtc(wallMs: number): number
}

const OFFSET = /^([+-])(\d{2})(?::?(\d{2}))?$/

function fixedZone(label: string, offsetMs: number): TimeZone {
  return { label, toUtc: (wallMs) => wallMs - offsetMs }
}

function offsetMsOf(sign: string, hours: string, minutes: string | undefined): number {
  const ms = (Number(hours) * 60 + Number(minutes ?? '0')) * 60_000
  return sign === '-' ? -ms : ms
}

/** Offset of an IANA zone at an instant (ms; positive east of Greenwich), from Intl's wall-clock fields. */
function ianaOffsetMs(format: Intl.DateTimeFormat, utcMs: number): number {
  const f: Record<string, number> = {}
  for (const p of format.formatToParts(new Date(utcMs))) if (p.type !== 'literal') f[p.type] = Number(p.value)
  const wall = civilMs(f.year ?? 1970, f.month ?? 1, f.day ?? 1, f.hour ?? 0, f.minute ?? 0, f.second ?? 0, 0)
  return wall - Math.floor(utcMs / 1000) * 1000
}

/**
 * Reads a `--timezone` value: `UTC` (or `Z`), a fixed offset `±HH:MM` / `±HHMM` / `±HH`, or an IANA
 * zone name such as `Europe/Berlin` (daylight saving time applies).
 * @throws RangeError naming the value when it is none of these.
 */
export function parseTimeZone(spec: string): TimeZone {
  const s = spec.trim()
  if (/^(utc|z|gmt|etc\/utc)$/i.test(s)) return fixedZone(s.toUpperCase() === 'Z' ? 'UTC' : s, 0)
  const m = OFFSET.exec(s)
  if (m !== null) {
    const [, sign = '+', hh = '00', mm] = m
    if (Number(hh) > 23 || Number(mm ?? '0') > 59) throw new RangeError(`time zone "${spec}": the offset must be within ±23:59`)
    return fixedZone(s, offsetMsOf(sign, hh, mm))
  }
  let format: Intl.DateTimeFormat
  try {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: s,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    })
  } catch {
    throw new RangeError(`time zone "${spec}" is not UTC, an offset like +02:00, or an IANA zone name like Europe/Berlin`)
  }
  return {
    label: s,
    toUtc(wallMs) {
      // Two passes: the offset at the first guess may differ from the offset at the answer near a DST change.
      const guess = ianaOffsetMs(format, wallMs)
      const settled = ianaOffsetMs(format, wallMs - guess)
      return wallMs - settled
    },
  }
}

/** A timestamp read from a log. */
export interface ParsedTime {
  /** ms since the epoch (UTC). */
  ms: number
  /** True when the text had no zone and was read in the given TimeZone. */
  naive: boolean
  /** True when digits below the millisecond were dropped (the API keeps milliseconds). */
  truncated: boolean
}

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?\s*(Z|z|UTC|[+-]\d{2}(?::?\d{2})?)?$/
const EPOCH_SECONDS = /^[+-]?\d+(?:\.\d+)?$/

/**
 * Reads one OCEL timestamp.
 * - `2023-04-03T12:08:18Z`, `2022-01-09T14:00:00+00:00`, `2024-05-14 13:00:00+00:00`: that instant.
 * - `2023-04-03 12:08:18`, `2022-01-09T15:00:00`, `2023-04-03`: wall-clock time in `zone` (naive).
 * - `0`, `1680523698` (and JSON numbers): seconds since the epoch (the XML layout writes `time="0"`
 *   for initial attribute values).
 * @returns null when `raw` is none of these or names no real date (e.g. month 13).
 */
export function parseOcelTime(raw: unknown, zone: TimeZone): ParsedTime | null {
  if (typeof raw === 'number') return Number.isFinite(raw) ? { ms: Math.round(raw * 1000), naive: false, truncated: false } : null
  if (typeof raw !== 'string') return null
  const canonical = canonicalUtcMs(raw)
  if (canonical !== null) return { ms: canonical, naive: false, truncated: false }
  const s = raw.trim()
  if (EPOCH_SECONDS.test(s)) return parseOcelTime(Number(s), zone)
  const m = DATE_TIME.exec(s)
  if (m === null) return null
  const [, y, mo, d, h = '0', mi = '0', sec = '0', frac = '', tz] = m
  const [year, month, day, hour, minute, second] = [Number(y), Number(mo), Number(d), Number(h), Number(mi), Number(sec)]
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour > 23 || minute > 59 || second > 59) return null
  const wall = civilMs(year, month, day, hour, minute, second, Number(frac.slice(0, 3).padEnd(3, '0')))
  const truncated = /[1-9]/.test(frac.slice(3))
  if (tz === undefined) return { ms: zone.toUtc(wall), naive: true, truncated }
  if (tz === 'Z' || tz === 'z' || tz === 'UTC') return { ms: wall, naive: false, truncated }
  const o = OFFSET.exec(tz)
  if (o === null) return null
  const [, sign = '+', hh = '00', mm] = o
  return { ms: wall - offsetMsOf(sign, hh, mm), naive: false, truncated }
}

/** Counters of the timestamps a reader has read (see ReadNotes). */
export interface TimeCounters {
  naiveTimestamps: number
  truncatedTimestamps: number
}

/**
 * parseOcelTime, counting naive and truncated timestamps in `counters`.
 * @returns ms since the epoch, or null when unreadable (the caller counts that by cause).
 */
export function readTime(raw: unknown, zone: TimeZone, counters: TimeCounters): number | null {
  const t = parseOcelTime(raw, zone)
  if (t === null) return null
  if (t.naive) counters.naiveTimestamps += 1
  if (t.truncated) counters.truncatedTimestamps += 1
  return t.ms
}
