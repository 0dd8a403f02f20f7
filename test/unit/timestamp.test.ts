import { describe, expect, it } from 'vitest'
import { canonicalUtcMs, isoNow, parseTimestamp } from '../../src/core/timestamp.js'

function utcOf(text: string): string | null {
  const p = parseTimestamp(text)
  return p.ok ? p.utc : null
}

function reasonOf(text: string): string {
  const p = parseTimestamp(text)
  return p.ok ? '' : p.reason
}

describe('parseTimestamp: accepted forms', () => {
  it('reads RFC 3339 with Z', () => {
    expect(utcOf('2024-05-01T10:00:00Z')).toBe('2024-05-01T10:00:00.000Z')
  })

  it('reads RFC 3339 with a ±hh:mm offset', () => {
    expect(utcOf('2024-05-01T12:30:00-02:30')).toBe('2024-05-01T15:00:00.000Z')
  })

  it('reads lowercase t and z (RFC 3339 § 5.6)', () => {
    expect(utcOf('2024-05-01t10:00:00z')).toBe('2024-05-01T10:00:00.000Z')
  })

  it('reads the basic format', () => {
    expect(utcOf('20240501T100000Z')).toBe('2024-05-01T10:00:00.000Z')
  })

  it('reads the basic format with a basic offset', () => {
    expect(utcOf('20240501T120000+0200')).toBe('2024-05-01T10:00:00.000Z')
  })

  it('reads a decimal fraction after a full stop', () => {
    expect(utcOf('2024-05-01T10:00:00.25Z')).toBe('2024-05-01T10:00:00.250Z')
  })

  it('reads a decimal fraction after a comma', () => {
    expect(utcOf('2024-05-01T10:00:00,5Z')).toBe('2024-05-01T10:00:00.500Z')
  })

  it('truncates a fraction finer than milliseconds, never rounding into the next second', () => {
    expect(utcOf('2024-05-01T10:00:59.999999Z')).toBe('2024-05-01T10:00:59.999Z')
  })

  it('reads an offset without a colon', () => {
    expect(utcOf('2024-05-01T10:00:00+0200')).toBe('2024-05-01T08:00:00.000Z')
  })

  it('reads an offset of hours only', () => {
    expect(utcOf('2024-05-01T10:00:00+02')).toBe('2024-05-01T08:00:00.000Z')
  })

  it('reads -00:00 as UTC (RFC 3339 § 4.3)', () => {
    expect(utcOf('2024-05-01T10:00:00-00:00')).toBe('2024-05-01T10:00:00.000Z')
  })

  it('reads 24:00:00 as the start of the next day', () => {
    expect(utcOf('2024-12-31T24:00:00Z')).toBe('2025-01-01T00:00:00.000Z')
  })

  it('reads 24:00:00 with a zero fraction and an offset', () => {
    expect(utcOf('2024-02-28T24:00:00.000+01:00')).toBe('2024-02-28T23:00:00.000Z')
  })

  it('reads 29 February of a leap year', () => {
    expect(utcOf('2000-02-29T00:00:00Z')).toBe('2000-02-29T00:00:00.000Z')
  })

  it('reads the first and last instants with four-digit UTC years', () => {
    expect(utcOf('0001-01-01T00:00:00Z')).toBe('0001-01-01T00:00:00.000Z')
    expect(utcOf('9999-12-31T23:59:59.999Z')).toBe('9999-12-31T23:59:59.999Z')
  })

  it('reads a year-0000 local time whose UTC instant is in year 0001', () => {
    expect(utcOf('0000-12-31T23:00:00-02:00')).toBe('0001-01-01T01:00:00.000Z')
  })
})

describe('parseTimestamp: the fast path of YYYY-MM-DDTHH:MM:SS[.sss]Z', () => {
  const texts: string[] = []
  for (const date of [
    '2024-02-29',
    '2023-02-29',
    '2023-04-31',
    '2023-04-30',
    '2023-13-01',
    '2023-00-10',
    '2023-01-00',
    '0000-01-01',
    '0001-01-01',
    '0050-06-01',
    '9999-12-31',
  ]) {
    for (const time of ['00:00:00', '23:59:59', '24:00:00', '12:60:00', '12:00:60', '1a:00:00']) {
      for (const fraction of ['', '.000', '.999', '.x00']) texts.push(`${date}T${time}${fraction}Z`)
    }
  }

  it('answers every text of that shape as the general path does (reached with a lower-case t, RFC 3339 § 5.6)', () => {
    let accepted = 0
    for (const text of texts) {
      const general = parseTimestamp(text.replace('T', 't'))
      expect([text, parseTimestamp(text)]).toEqual([text, general])
      if (general.ok) accepted += 1
    }
    // 5 real dates × 2 times × 3 fractions of digits, and 24:00:00 (the general path's alone) with no or a zero fraction on
    // the 4 dates whose next day has a four-digit year
    expect(accepted).toBe(5 * 2 * 3 + 4 * 2)
  })

  it('takes the fast path only for texts it reads exactly, with the instant of the text', () => {
    expect(canonicalUtcMs('2024-02-29T23:59:59.999Z')).toBe(Date.UTC(2024, 1, 29, 23, 59, 59, 999))
    expect(canonicalUtcMs('0050-06-01T12:00:00Z')).toBe(Date.parse('0050-06-01T12:00:00Z'))
    for (const text of [
      '2024-02-30T00:00:00Z',
      '2024-01-01T24:00:00Z',
      '0000-01-01T00:00:00Z',
      '2024-01-01t00:00:00Z',
      '2024-01-01T00:00:00.5Z',
      '2024-01-01T00:00:00+00:00',
    ]) {
      expect([text, canonicalUtcMs(text)]).toEqual([text, null])
    }
  })
})

describe('parseTimestamp: refused forms', () => {
  it('refuses a leap second, suggesting …:59.999', () => {
    expect(reasonOf('2016-12-31T23:59:60Z')).toMatch(/leap second.*59\.999/)
  })

  it('refuses a leap second in basic format with an offset', () => {
    expect(reasonOf('20170101T005960+01')).toMatch(/leap second/)
  })

  it('refuses a date-time without an offset', () => {
    expect(reasonOf('2024-05-01T10:00:00')).toMatch(/no Z or offset/)
  })

  it('refuses a week date', () => {
    expect(reasonOf('2024-W18-3T10:00:00Z')).toMatch(/week dates/)
  })

  it('refuses an ordinal date', () => {
    expect(reasonOf('2024-122T10:00:00Z')).toMatch(/ordinal dates/)
  })

  it('refuses reduced precision: no seconds', () => {
    expect(reasonOf('2024-05-01T10:00Z')).toMatch(/not a valid ISO 8601/)
  })

  it('refuses reduced precision: a date alone', () => {
    expect(reasonOf('2024-05-01')).toMatch(/not a valid ISO 8601/)
  })

  it('refuses a decimal fraction of the minute', () => {
    expect(reasonOf('2024-05-01T10:30,5Z')).toMatch(/not a valid ISO 8601/)
  })

  it('refuses an expanded year', () => {
    expect(reasonOf('+012024-05-01T10:00:00Z')).toMatch(/not a valid ISO 8601/)
  })

  it('refuses a space in place of T', () => {
    expect(reasonOf('2024-05-01 10:00:00Z')).toMatch(/not a valid ISO 8601/)
  })

  it('refuses a basic date with an extended time', () => {
    expect(reasonOf('20240501T10:00:00Z')).toMatch(/not a valid ISO 8601/)
  })

  it('refuses a day the month does not have', () => {
    expect(reasonOf('2023-02-29T00:00:00Z')).toMatch(/has no day 29/)
  })

  it('refuses month 13', () => {
    expect(reasonOf('2024-13-01T00:00:00Z')).toMatch(/month 13/)
  })

  it('refuses 24:00 with minutes or seconds', () => {
    expect(reasonOf('2024-05-01T24:00:01Z')).toMatch(/24:00:00/)
  })

  it('refuses minute 60', () => {
    expect(reasonOf('2024-05-01T10:60:00Z')).toMatch(/out of range/)
  })

  it('refuses an offset of 24 hours', () => {
    expect(reasonOf('2024-05-01T10:00:00+24:00')).toMatch(/offset \+24:00/)
  })

  it('refuses an instant before year 0001 in UTC', () => {
    expect(reasonOf('0000-01-01T00:00:00+14:00')).toMatch(/0001–9999/)
  })

  it('refuses an instant after year 9999 in UTC', () => {
    expect(reasonOf('9999-12-31T23:59:59.999-12:00')).toMatch(/0001–9999/)
  })

  it('refuses text that is no date-time at all', () => {
    expect(reasonOf('yesterday')).toBe('is not a valid ISO 8601 date-time with Z or an offset')
  })
})

describe('isoNow: the current time as Date#toISOString, formatted once per millisecond', () => {
  it('is the clock at the call, to the millisecond, in the form toISOString writes', () => {
    for (let i = 0; i < 2_000; i++) {
      const before = Date.now()
      const now = isoNow()
      const after = Date.now()
      expect(now).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
      const ms = Date.parse(now)
      expect(ms).toBeGreaterThanOrEqual(before)
      expect(ms).toBeLessThanOrEqual(after)
    }
  })

  it('moves on with the clock', async () => {
    const first = isoNow()
    await new Promise((resolve) => setTimeout(resolve, 5))
    expect(Date.parse(isoNow())).toBeGreaterThan(Date.parse(first))
  })
})
