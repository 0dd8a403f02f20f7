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
