import type { Command } from 'commander'
import type { Writable } from 'node:stream'
import { unhandledRecord } from '../../core/record-decoder.js'
import type { EventLog } from '../../ports/event-log.js'
import type { StoredRecord } from '../../schemas/records.js'
import { recomputeChain } from '../../read/audit-check.js'
import { CliError, withBackends } from '../context.js'
import { delivered } from '../stdout.js'

/** Records read from the log per page of a replay (replayStream). */
export const REPLAY_PAGE = 1000

/**
 * One line of the text replay after its position and append time: the record type, its id, what it
 * says, and who sent it. The records come decoded by the log's one decoder; the switch over
 * (type, version) is exhaustive, so a new record version fails to compile until it has a line.
 */
export function replayLine(r: StoredRecord): string {
  switch (r.type) {
    case 'EventRecorded':
      switch (r.version) {
        case 1: {
          const d = r.data
          return `EventRecorded   ${d.event_id}  "${d.event_type}" at ${d.timestamp}, ${String(d.objects.length)} object(s)  key=${d.key_id} request=${d.request_id}`
        }
        default:
          return unhandledRecord(r)
      }
    case 'ObjectUpserted':
      switch (r.version) {
        case 2: {
          const d = r.data
          const o2o = d.relationships.length === 0 ? '' : `, ${String(d.relationships.length)} O2O relationship(s)`
          const written = r.upcastFrom === undefined ? '' : ` (written as v${String(r.upcastFrom)})`
          return `ObjectUpserted  ${d.object_id}  ${d.type}/${d.id}, ${String(Object.keys(d.properties).length)} attribute(s) at ${d.time}${o2o}  key=${d.key_id} request=${d.request_id}${written}`
        }
        default:
          return unhandledRecord(r)
      }
    case 'TypesDeclared':
      switch (r.version) {
        case 1: {
          const d = r.data
          return `TypesDeclared   ${String(d.event_types.length)} event type(s), ${String(d.object_types.length)} object type(s)  key=${d.key_id} request=${d.request_id}`
        }
        default:
          return unhandledRecord(r)
      }
    default:
      return unhandledRecord(r)
  }
}

/** One record as a line of `ocelog replay --json` (NDJSON; the option's help names the fields). */
export function replayJsonLine(r: StoredRecord): string {
  return JSON.stringify({
    position: r.position,
    stream: r.stream,
    type: r.type,
    version: r.version,
    ...(r.upcastFrom === undefined ? {} : { upcast_from: r.upcastFrom }),
    appended_at: r.appendedAt,
    ...(r.idempotency === undefined ? {} : { idempotency_key: r.idempotency.key, fingerprint: r.idempotency.fingerprint }),
    data: r.data,
  })
}

/** One record as a line of the text replay: position, append time, replayLine, and the idempotency key when it has one. */
export function replayTextLine(r: StoredRecord): string {
  return `${String(r.position).padStart(8)}  ${r.appendedAt}  ${replayLine(r)}${r.idempotency === undefined ? '' : `  idempotency_key=${JSON.stringify(r.idempotency.key)}`}`
}

/**
 * Waits, when `out`'s queue is full, until it drains.
 * @returns false when `out` failed with EPIPE (its reader left).
 * @throws the stream's error when it failed otherwise.
 */
async function caughtUpWith(out: Writable): Promise<boolean> {
  if (!out.writableNeedDrain && out.errored === null) return true
  if (!(await delivered(out))) return false
  if (out.errored !== null) throw out.errored
  return true
}

/**
 * Writes the records of a dataset's stream after `after` (exclusive; null: from the start) to
 * `out`, one line each (replayJsonLine or replayTextLine), reading the log a page of REPLAY_PAGE records
 * at a time. When `out`'s queue is full (a slow reader, as `| less`), it waits for the queue to
 * drain before it reads the next page, so the stream never piles up in memory.
 * @returns how many records were written, or null when `out` failed with EPIPE (its reader left).
 * @throws the stream's error when `out` failed otherwise, and the log's when a read fails.
 */
export async function replayStream(
  log: Pick<EventLog, 'readStream'>,
  datasetId: string,
  after: number | null,
  json: boolean,
  out: Writable,
): Promise<number | null> {
  let count = 0
  let from = after
  for (;;) {
    const page = await log.readStream(datasetId, from, REPLAY_PAGE)
    for (const r of page) out.write(`${json ? replayJsonLine(r) : replayTextLine(r)}\n`)
    count += page.length
    if (!(await caughtUpWith(out))) return null
    const last = page[page.length - 1]
    if (last === undefined || page.length < REPLAY_PAGE) return count
    from = last.position
  }
}

/**
 * Like replayStream, each line with the record's chain hash (README § Operations, digests):
 * `chain_hash` in JSON, `chain=<hash>` in text, recomputed from the log from the dataset's first
 * record (so records up to `after` are read, not written).
 * @returns records written, or null when `out` failed with EPIPE.
 */
export async function replayWithHashes(
  log: Pick<EventLog, 'readStream'>,
  datasetId: string,
  after: number | null,
  json: boolean,
  out: Writable,
): Promise<number | null> {
  let count = 0
  for await (const { record, entry } of recomputeChain(log, datasetId, null)) {
    if (after !== null && record.position <= after) continue
    out.write(
      json
        ? `${replayJsonLine(record).slice(0, -1)},"chain_seq":${String(entry.seq)},"chain_hash":"${entry.hash}"}\n`
        : `${replayTextLine(record)}  chain=${entry.hash}\n`,
    )
    count += 1
    if (!(await caughtUpWith(out))) return null
  }
  return count
}

export function registerReplay(program: Command): void {
  program
    .command('replay')
    .description("Print a dataset's records in log order, for auditors: every accepted event and object upsert, unchanged, with who sent it and when")
    .requiredOption('--dataset <id>', 'dataset id (see: ocelog datasets list)')
    .option('--from <position>', 'start after this log position (exclusive)')
    .option(
      '--json',
      'print NDJSON: one record per line {position, stream, type, version, upcast_from?, appended_at, idempotency_key?, fingerprint?, data}; a record written in an older version is shown upcast to the current one, with upcast_from naming the version it was written in',
    )
    .option(
      '--with-hashes',
      "add each record's audit-chain hash (chain_seq and chain_hash in JSON, chain=<hash> in text), recomputed from the log: the last one is the dataset's digest (see: ocelog digest)",
    )
    .action(async (opts: { dataset: string; from?: string; json?: boolean; withHashes?: boolean }) => {
      let after: number | null = null
      if (opts.from !== undefined) {
        after = Number(opts.from)
        if (!Number.isSafeInteger(after) || after < 0) throw new CliError(`--from ${opts.from}: must be a log position (a whole number ≥ 0)`)
      }
      await withBackends(async (b) => {
        if ((await b.keys.findDataset(opts.dataset)) === null) throw new CliError(`dataset "${opts.dataset}" does not exist (see: ocelog datasets list)`)
        const replay = opts.withHashes === true ? replayWithHashes : replayStream
        const count = await replay(b.log, opts.dataset, after, opts.json === true, process.stdout)
        // null: the reader of stdout left (the global handler ends the command with exit 141).
        if (count === null || !(await delivered(process.stdout))) return
        if (opts.json !== true) process.stderr.write(`${String(count)} record(s) in stream dataset-${opts.dataset}\n`)
      })
    })
}
