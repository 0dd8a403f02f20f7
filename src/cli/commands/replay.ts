import type { Command } from 'commander'
import { unhandledRecord } from '../../core/record-decoder.js'
import type { StoredRecord } from '../../schemas/records.js'
import { CliError, printJson, withBackends } from '../context.js'
import { stdoutDelivered } from '../stdout.js'

const PAGE = 1000

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
    default:
      return unhandledRecord(r)
  }
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
    .action(async (opts: { dataset: string; from?: string; json?: boolean }) => {
      let after: number | null = null
      if (opts.from !== undefined) {
        after = Number(opts.from)
        if (!Number.isSafeInteger(after) || after < 0) throw new CliError(`--from ${opts.from}: must be a log position (a whole number ≥ 0)`)
      }
      await withBackends(async (b) => {
        if ((await b.keys.findDataset(opts.dataset)) === null) throw new CliError(`dataset "${opts.dataset}" does not exist (see: ocelog datasets list)`)
        let count = 0
        for (;;) {
          const page = await b.log.readStream(opts.dataset, after, PAGE)
          for (const r of page) {
            if (opts.json === true) {
              printJson(
                {
                  position: r.position,
                  stream: r.stream,
                  type: r.type,
                  version: r.version,
                  ...(r.upcastFrom === undefined ? {} : { upcast_from: r.upcastFrom }),
                  appended_at: r.appendedAt,
                  ...(r.idempotency === undefined ? {} : { idempotency_key: r.idempotency.key, fingerprint: r.idempotency.fingerprint }),
                  data: r.data,
                },
                true,
              )
            } else {
              process.stdout.write(
                `${String(r.position).padStart(8)}  ${r.appendedAt}  ${replayLine(r)}${r.idempotency === undefined ? '' : `  idempotency_key=${JSON.stringify(r.idempotency.key)}`}\n`,
              )
            }
          }
          count += page.length
          // A page at a time into stdout's queue: a slow reader (`| less`) holds the replay back
          // instead of the whole stream piling up in memory; a reader that left ends it (exit 141).
          if (process.stdout.writableNeedDrain && !(await stdoutDelivered())) return
          const last = page[page.length - 1]
          if (last === undefined || page.length < PAGE) break
          after = last.position
        }
        if (!(await stdoutDelivered())) return
        if (opts.json !== true) process.stderr.write(`${String(count)} record(s) in stream dataset-${opts.dataset}\n`)
      })
    })
}
