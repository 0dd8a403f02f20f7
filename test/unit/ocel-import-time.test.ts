import { describe, expect, it } from 'vitest'
import { parseOcelTime, parseTimeZone } from '../../src/ocel/import/time.js'

const utc = parseTimeZone('UTC')
const iso = (raw: unknown, zone = utc) => {
  const t = parseOcelTime(raw, zone)
  return t === null ? null : new Date(t.ms).toISOString()
}

describe('parseOcelTime', () => {
  it('reads RFC 3339 with Z and with an offset as that instant', () => {
    expect(iso('2023-04-03T12:08:18Z')).toBe('2023-04-03T12:08:18.000Z')
    expect(iso('2022-01-09T14:00:00+00:00')).toBe('2022-01-09T14:00:00.000Z')
    expect(iso('2024-05-14 13:00:00+02:00')).toBe('2024-05-14T11:00:00.000Z')
    expect(iso('2024-05-14T13:00:00-0130')).toBe('2024-05-14T14:30:00.000Z')
  })

  it('marks a timestamp without a zone as naive and reads it in the given zone', () => {
    expect(parseOcelTime('2023-04-03 12:08:18', utc)).toEqual({ ms: Date.UTC(2023, 3, 3, 12, 8, 18), naive: true, truncated: false })
    expect(iso('2022-01-09T15:00:00', parseTimeZone('+01:00'))).toBe('2022-01-09T14:00:00.000Z')
    expect(parseOcelTime('2022-01-09T15:00:00+01:00', parseTimeZone('+05:00'))?.naive).toBe(false)
  })

  it('applies daylight saving time of an IANA zone', () => {
    const berlin = parseTimeZone('Europe/Berlin')
    expect(iso('2022-01-09 15:00:00', berlin)).toBe('2022-01-09T14:00:00.000Z')
    expect(iso('2022-07-09 15:00:00', berlin)).toBe('2022-07-09T13:00:00.000Z')
    expect(iso('1970-01-01 01:00:00', berlin)).toBe('1970-01-01T00:00:00.000Z')
    expect(iso('2024-10-27 01:30:00', berlin)).toBe('2024-10-26T23:30:00.000Z')
  })

  it('reads digits alone as seconds since the epoch (the XML layout writes time="0")', () => {
    expect(parseOcelTime('0', utc)).toEqual({ ms: 0, naive: false, truncated: false })
    expect(iso('1680523698')).toBe('2023-04-03T12:08:18.000Z')
    expect(iso(1680523698.5)).toBe('2023-04-03T12:08:18.500Z')
  })

  it('keeps milliseconds and says when finer digits were dropped', () => {
    expect(parseOcelTime('2023-04-03T12:08:18.123456Z', utc)).toEqual({ ms: Date.UTC(2023, 3, 3, 12, 8, 18, 123), naive: false, truncated: true })
    expect(parseOcelTime('2023-04-03T12:08:18.120000Z', utc)?.truncated).toBe(false)
  })

  it('reads YYYY-MM-DDTHH:MM:SS[.sss]Z on its fast path exactly as the general path does', () => {
    // A leading space takes a text off the fast path (it needs the exact form); the general path trims it.
    const general = (text: string) => parseOcelTime(` ${text}`, utc)
    const texts: string[] = []
    for (const date of [
      '2024-02-29',
      '2023-02-29',
      '2023-04-31',
      '2023-12-31',
      '2023-13-01',
      '2023-00-10',
      '2023-01-00',
      '0050-06-01',
      '0100-01-01',
      '9999-12-31',
      '1970-01-01',
    ]) {
      for (const time of ['00:00:00', '23:59:59', '24:00:00', '12:60:00', '12:00:60', '1a:00:00']) {
        for (const fraction of ['', '.000', '.999', '.12', '.1234', '.x00']) texts.push(`${date}T${time}${fraction}Z`, `${date}t${time}${fraction}z`)
      }
    }
    texts.push('2023-04-03 12:08:18Z', '2023-04-03T12:08:18+00:00', '2023/04/03T12:08:18Z', '+02023-04-03T12:08:18Z')
    let read = 0
    for (const text of texts) {
      const answer = parseOcelTime(text, utc)
      expect([text, answer]).toEqual([text, general(text)])
      if (answer !== null) read += 1
    }
    // 6 real dates × 2 real times × 5 readable fractions with an upper-case T, and the two other forms pushed last
    expect(read).toBe(62)
    expect(parseOcelTime('2024-02-29T23:59:59.999Z', utc)).toEqual({ ms: Date.UTC(2024, 1, 29, 23, 59, 59, 999), naive: false, truncated: false })
  })

  it('reads years 0001-0099 as those years, not 1901-1999 (the API accepts them, so the export writes them)', () => {
    const year50 = Date.parse('0050-06-01T00:00:00.000Z')
    expect(new Date(year50).getUTCFullYear()).toBe(50)
    expect(parseOcelTime('0050-06-01T00:00:00Z', utc)).toEqual({ ms: year50, naive: false, truncated: false })
    // The general path: a space instead of T, an offset, a naive time, a date alone.
    expect(parseOcelTime('0050-06-01 02:00:00+02:00', utc)?.ms).toBe(year50)
    expect(parseOcelTime('0050-06-01 00:00:00', utc)).toEqual({ ms: year50, naive: true, truncated: false })
    expect(parseOcelTime('0001-01-01', utc)?.ms).toBe(Date.parse('0001-01-01T00:00:00.000Z'))
    // 0004 is a leap year, 0100 is not (proleptic Gregorian, as Date counts).
    expect(parseOcelTime('0004-02-29 12:00:00Z', utc)?.ms).toBe(Date.parse('0004-02-29T12:00:00.000Z'))
    expect(parseOcelTime('0100-02-29 12:00:00Z', utc)).toBeNull()
  })

  it('reads a naive time of year 0050 in an IANA zone as that wall-clock time there', () => {
    const berlin = parseTimeZone('Europe/Berlin')
    // The inverse, by Intl alone: the instant read, shown as Berlin's wall clock, is the text again.
    const wallClock = (ms: number) =>
      new Intl.DateTimeFormat('en-US', {
        timeZone: 'Europe/Berlin',
        hourCycle: 'h23',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
      })
        .formatToParts(new Date(ms))
        .filter((p) => p.type !== 'literal')
        .map((p) => `${p.type}=${p.value}`)
        .join(' ')
    const year50 = parseOcelTime('0050-06-01 12:00:00', berlin)
    expect(year50?.naive).toBe(true)
    expect(new Date(year50?.ms ?? Number.NaN).getUTCFullYear()).toBe(50)
    expect(wallClock(year50?.ms ?? Number.NaN)).toBe('month=6 day=1 year=50 hour=12 minute=00 second=00')
    expect(wallClock(parseOcelTime('2024-06-01 12:00:00', berlin)?.ms ?? Number.NaN)).toBe('month=6 day=1 year=2024 hour=12 minute=00 second=00')
  })

  it('rejects text that names no real date', () => {
    expect(parseOcelTime('2023-02-30 00:00:00', utc)).toBeNull()
    expect(parseOcelTime('yesterday', utc)).toBeNull()
    expect(parseOcelTime(null, utc)).toBeNull()
    expect(parseOcelTime('2023-04-03T25:00:00Z', utc)).toBeNull()
  })
})

describe('parseTimeZone', () => {
  it('accepts UTC, fixed offsets and IANA names', () => {
    expect(parseTimeZone('utc').toUtc(1000)).toBe(1000)
    expect(parseTimeZone('+02:00').toUtc(Date.UTC(2024, 0, 1, 12))).toBe(Date.UTC(2024, 0, 1, 10))
    expect(parseTimeZone('-0330').toUtc(Date.UTC(2024, 0, 1, 12))).toBe(Date.UTC(2024, 0, 1, 15, 30))
    expect(parseTimeZone('America/New_York').toUtc(Date.UTC(2024, 6, 1, 12))).toBe(Date.UTC(2024, 6, 1, 16))
  })

  it('rejects an unknown zone with a message naming it', () => {
    expect(() => parseTimeZone('Mars/Olympus')).toThrow(/Mars\/Olympus/)
    expect(() => parseTimeZone('+25:00')).toThrow(/±23:59/)
  })
})
