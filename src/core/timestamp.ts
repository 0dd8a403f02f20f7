/**
 * Reading the API's date-times (docs/api.md#date-times: "ISO 8601 with a Z or an
 * offset") into the log's form: UTC ISO 8601 with milliseconds. Pure. Every place that reads a
 * date-time from a caller (ingest fields, query parameters such as `from`/`to`) uses this one
 * function, so that what is accepted is the same everywhere.
 *
 * Accepted: the complete ISO 8601-1 date-time representations that carry a UTC offset, which are
 * unambiguous instants:
 * - extended format `2024-05-01T10:00:00Z` (RFC 3339) and basic format `20240501T100000Z`;
 * - an optional decimal fraction of the second, after `.` or `,` (`10:00:00.5Z`, `10:00:00,5Z`),
 *   of any length; it is truncated (never rounded) to milliseconds;
 * - the offset as `Z`, `±hh:mm`, `±hhmm` or `±hh` (hours 00–23, minutes 00–59; `-00:00` is UTC);
 * - `24:00:00` (end of the day), read as 00:00:00 of the next day;
 * - `T` and `Z` in either case (RFC 3339 § 5.6).
 *
 * Refused, each with a reason: no offset (a local time names no instant), a leap second
 * (`:60`; JavaScript dates and so the log cannot hold one), week dates (`2024-W18-3`), ordinal
 * dates (`2024-122`), reduced precision (no seconds, or a date alone), decimal fractions of the
 * hour or minute, expanded years (`+012024`), a space instead of `T`, a date and time where one is
 * basic and the other extended, dates that do not exist (`2023-02-29`), and instants whose UTC
 * date falls outside the years 0001–9999 (they cannot be written back as four-digit years).
 */

export type ParsedTimestamp = { ok: true; utc: string } | { ok: false; reason: string }

const OFFSET = '([Zz]|[+-]\\d{2}(?::?\\d{2})?)'
const EXTENDED = new RegExp(`^(\\d{4})-(\\d{2})-(\\d{2})[Tt](\\d{2}):(\\d{2}):(\\d{2})(?:[.,](\\d+))?${OFFSET}$`)
const BASIC = new RegExp(`^(\\d{4})(\\d{2})(\\d{2})[Tt](\\d{2})(\\d{2})(\\d{2})(?:[.,](\\d+))?${OFFSET}$`)
const NO_OFFSET = /^(\d{4}-?\d{2}-?\d{2})[Tt](\d{2}:?\d{2}:?\d{2})([.,]\d+)?$/
const LEAP_SECOND = /^\d{4}-?\d{2}-?\d{2}[Tt]\d{2}:?\d{2}:?60([.,]\d+)?/
const WEEK_OR_ORDINAL = /^\d{4}-?(W\d{2}-?\d|\d{3})([Tt]|$)/

const MS_PER_DAY = 86_400_000
const INVALID = 'is not a valid ISO 8601 date-time with Z or an offset'

/** Days from 1970-01-01 to the proleptic Gregorian date y-m-d (Howard Hinnant's days_from_civil). */
function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y
  const era = Math.floor(yy / 400)
  const yoe = yy - era * 400
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy
  return era * 146_097 + doe - 719_468
}

/** Days in month `m` (1–12) of the proleptic Gregorian year `y`. */
export function daysInMonth(y: number, m: number): number {
  if (m === 2) return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0 ? 29 : 28
  return m === 4 || m === 6 || m === 9 || m === 11 ? 30 : 31
}

/**
 * Epoch milliseconds of a proleptic Gregorian date and time of day read as UTC, fields as written
 * (month 1–12). Linear in the day and the time fields, so hour 24 is 00:00 of the next day. Unlike
 * Date.UTC, years 0–99 are those years, not 1900–1999. Callers check the fields' ranges.
 */
export function civilMs(year: number, month: number, day: number, hour: number, minute: number, second: number, millis: number): number {
  return (((daysFromCivil(year, month, day) * 24 + hour) * 60 + minute) * 60 + second) * 1000 + millis
}

/** First and last millisecond that still have a four-digit UTC year (0001-01-01 … 9999-12-31). */
const MIN_MS = daysFromCivil(1, 1, 1) * MS_PER_DAY
const MAX_MS = daysFromCivil(10_000, 1, 1) * MS_PER_DAY - 1

/** Offset in minutes east of UTC, or null when out of range. */
function offsetMinutes(text: string): number | null {
  if (text === 'Z' || text === 'z') return 0
  const sign = text.startsWith('-') ? -1 : 1
  const digits = text.slice(1).replace(':', '')
  const hours = Number(digits.slice(0, 2))
  const minutes = digits.length > 2 ? Number(digits.slice(2)) : 0
  if (hours > 23 || minutes > 59) return null
  return sign * (hours * 60 + minutes)
}

const DIGIT_0 = 48
const DIGIT_9 = 57

/** The number the decimal digits of `text` from `start` to `end` (exclusive) write, or -1 when one is not a digit. */
function digitsAt(text: string, start: number, end: number): number {
  let n = 0
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i)
    if (c < DIGIT_0 || c > DIGIT_9) return -1
    n = n * 10 + (c - DIGIT_0)
  }
  return n
}

/**
 * The instant of the form nearly every sender uses, RFC 3339 in UTC with whole seconds or
 * milliseconds: `YYYY-MM-DDTHH:MM:SSZ` or `YYYY-MM-DDTHH:MM:SS.sssZ` (upper-case `T` and `Z`), read
 * from character codes without the regular expressions of parseTimestamp.
 * @returns ms since the epoch, or null when `text` is not exactly that form with every field in range
 *   (year 0001–9999, a day the month has, hour 00–23, minute and second 00–59); callers then take
 *   their general path, which gives the same answer for every text this one reads.
 */
export function canonicalUtcMs(text: string): number | null {
  const n = text.length
  if ((n !== 20 && n !== 24) || text.charCodeAt(n - 1) !== 90 /* Z */) return null
  if (text[4] !== '-' || text[7] !== '-' || text[10] !== 'T' || text[13] !== ':' || text[16] !== ':' || (n === 24 && text[19] !== '.')) return null
  const year = digitsAt(text, 0, 4)
  const month = digitsAt(text, 5, 7)
  const day = digitsAt(text, 8, 10)
  const hour = digitsAt(text, 11, 13)
  const minute = digitsAt(text, 14, 16)
  const second = digitsAt(text, 17, 19)
  const millis = n === 24 ? digitsAt(text, 20, 23) : 0
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59 || millis < 0) return null
  return civilMs(year, month, day, hour, minute, second, millis)
}

function refusalOf(text: string): string {
  if (LEAP_SECOND.test(text)) {
    return 'is a leap second (:60), which Ocelog cannot store exactly; send the last millisecond before it, e.g. …:59.999'
  }
  if (NO_OFFSET.test(text)) return 'has no Z or offset: a local time names no instant; add Z or an offset such as +02:00'
  if (WEEK_OR_ORDINAL.test(text)) return `${INVALID}: week dates and ordinal dates are not accepted; send a calendar date YYYY-MM-DD`
  return INVALID
}

/**
 * Parses an ISO 8601 date-time that carries a `Z` or an offset (forms: see the module comment).
 * @returns `{ok: true, utc}` with `utc` as `YYYY-MM-DDTHH:mm:ss.sssZ`, or `{ok: false, reason}`
 *   naming the rule broken. Never throws.
 */
export function parseTimestamp(text: string): ParsedTimestamp {
  // The common form is read without the regular expressions below (the ingest path reads one per
  // item); its UTC text is itself, with `.000` added when it has whole seconds.
  if (canonicalUtcMs(text) !== null) return { ok: true, utc: text.length === 24 ? text : `${text.slice(0, 19)}.000Z` }
  const m = EXTENDED.exec(text) ?? BASIC.exec(text)
  if (m === null) return { ok: false, reason: refusalOf(text) }
  const [, ys, mos, ds, hs, mis, ss, fraction = '', offsetText = 'Z'] = m
  const year = Number(ys)
  const month = Number(mos)
  const day = Number(ds)
  const hour = Number(hs)
  const minute = Number(mis)
  const second = Number(ss)
  if (month < 1 || month > 12) return { ok: false, reason: `${INVALID}: month ${String(mos)} is not 01–12` }
  if (day < 1 || day > daysInMonth(year, month)) return { ok: false, reason: `${INVALID}: ${String(ys)}-${String(mos)} has no day ${String(ds)}` }
  if (second === 60) return { ok: false, reason: refusalOf(text) }
  if (hour === 24) {
    if (minute !== 0 || second !== 0 || /[1-9]/.test(fraction)) return { ok: false, reason: `${INVALID}: hour 24 is only 24:00:00, the end of the day` }
  } else if (hour > 23 || minute > 59 || second > 59) {
    return { ok: false, reason: `${INVALID}: time of day out of range (hh 00–23, mm 00–59, ss 00–59)` }
  }
  const offset = offsetMinutes(offsetText)
  if (offset === null) return { ok: false, reason: `${INVALID}: offset ${offsetText} is out of range (hours 00–23, minutes 00–59)` }
  const millis = Number(fraction.slice(0, 3).padEnd(3, '0'))
  const ms = civilMs(year, month, day, hour, minute, second, millis) - offset * 60_000
  if (ms < MIN_MS || ms > MAX_MS) {
    return { ok: false, reason: 'is outside the years 0001–9999 once converted to UTC; Ocelog stores UTC date-times with four-digit years' }
  }
  return { ok: true, utc: new Date(ms).toISOString() }
}

let nowMs = Number.NaN
let nowIso = ''

/**
 * The current time as ISO 8601 UTC with milliseconds (`Date#toISOString`), formatted once per
 * millisecond of the clock: a busy API stamps many requests and records in one millisecond, and
 * each `toISOString` cost about 2 µs. Same text as `new Date().toISOString()` at the time of call.
 */
export function isoNow(): string {
  const ms = Date.now()
  if (ms !== nowMs) {
    nowMs = ms
    nowIso = new Date(ms).toISOString()
  }
  return nowIso
}
