/**
 * The end of every projection's exhaustive switch over record types: a record type added to
 * NewRecord (src/schemas/records.ts) fails to compile at each `evolve` until it is handled there.
 * @throws at run time only for a record the decoder (src/core/record-decoder.ts) would have refused.
 */
export function unreachable(record: never): never {
  const r = record as { type?: unknown; version?: unknown; position?: unknown }
  throw new Error(`projection: unknown record ${String(r.type)} v${String(r.version)} at position ${String(r.position)}`)
}
