/**
 * Reading the API's date-times (spec § Event input, `timestamp`: "ISO 8601 with a Z or an
 * offset") into the log's form: UTC ISO 8601 with milliseconds. Pure. Every place that reads a
 * date-time from a caller (ingest fields, query parameters such as `from`/`to`) uses this one
 * function, so that what is accepted is the same everywhere.
 */

export type ParsedTimestamp = { ok: true; utc: string } | { ok: false; reason: string }

// RFC 3339 profile of ISO 8601: date, 'T', time with optional fraction, then Z or ±hh:mm.
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/

/**
 * Parses an ISO 8601 date-time that carries a `Z` or an offset.
 * @returns `{ok: true, utc}` with `utc` as `YYYY-MM-DDTHH:mm:ss.sssZ`, or `{ok: false, reason}`
 *   naming the rule broken. Never throws.
 */
export function parseTimestamp(text: string): ParsedTimestamp {
  if (!RFC3339.test(text)) return { ok: false, reason: 'is not a valid ISO 8601 date-time with Z or an offset' }
  const ms = Date.parse(text)
  if (!Number.isFinite(ms)) return { ok: false, reason: 'is not a valid ISO 8601 date-time with Z or an offset' }
  return { ok: true, utc: new Date(ms).toISOString() }
}
