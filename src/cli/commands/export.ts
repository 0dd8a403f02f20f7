import type { Command } from 'commander'
import { isOcelForm, OCEL_FORMS } from '../../ocel/forms.js'
import { datasetLag, LAG_COUNT_MAX } from '../../projector/status.js'
import { catchUpReadModels } from '../../projector/catch-up.js'
import { CliError, withBackends } from '../context.js'
import { delivered } from '../stdout.js'

export function registerExport(program: Command): void {
  program
    .command('export')
    .description(
      'Write a dataset as an OCEL 2.0 log in JSON, XML or SQLite (from the read models; on the embedded default and PostgreSQL the read models catch up first, so every accepted record is in it)',
    )
    .requiredOption('--dataset <id>', 'dataset id (see: ocelog datasets list)')
    .option('--format <form>', `OCEL 2.0 form: ${OCEL_FORMS.join(', ')} (sqlite needs --out)`, 'json')
    .option('--out <file>', 'write to this file instead of stdout (replaced atomically)')
    .option('--pretty', 'indent the JSON (2 spaces)')
    .action(async (opts: { dataset: string; format: string; out?: string; pretty?: boolean }) => {
      const form = opts.format
      if (!isOcelForm(form)) throw new CliError(`--format ${form}: must be one of ${OCEL_FORMS.join(', ')}`)
      if (form === 'sqlite' && opts.out === undefined) throw new CliError('--format sqlite writes a binary file: give it with --out FILE')
      // Loaded here, not at start, so that other commands (`serve` above all) do not carry the writers.
      const { exportOcelForm, InvalidOcelError } = await import('../../ocel/export-writer.js')
      await withBackends(async (b) => {
        if ((await b.keys.findDataset(opts.dataset)) === null) throw new CliError(`dataset "${opts.dataset}" does not exist (see: ocelog datasets list)`)
        if (b.mode !== 'production') {
          await catchUpReadModels(b)
        } else {
          const lag = await datasetLag(b.log, b.readModels, opts.dataset)
          if (lag.behind > 0) {
            const count = lag.behind >= LAG_COUNT_MAX ? `at least ${String(lag.behind)}` : String(lag.behind)
            process.stderr.write(
              `ocelog: warning: the read models lag ${count} record(s) of dataset ${opts.dataset} behind the log ` +
                `(read models at ${lag.checkpoint === null ? 'none' : String(lag.checkpoint)}, last record at ${String(lag.lastPosition)}); ` +
                'the export holds only what the projector has applied\n',
            )
          }
        }

        let s: Awaited<ReturnType<typeof exportOcelForm>>
        try {
          // Written as it is read, page by page (src/ocel/export-writer.ts).
          s = await exportOcelForm(b.query, opts.dataset, form, opts.out, { pretty: opts.pretty === true })
        } catch (error) {
          if (error instanceof InvalidOcelError)
            throw new CliError(`the export is not a valid OCEL 2.0 document (a bug in Ocelog, please report it): ${error.message}`)
          throw error
        }
        // The summary follows the document out: when the reader of stdout left (`ocelog export | head`),
        // the export is cut, so no summary claims it, and the command exits 141 (exitWhenStdoutCloses).
        if (opts.out === undefined && !(await delivered(process.stdout))) return
        process.stderr.write(
          `exported dataset ${opts.dataset}: ${String(s.events)} events, ${String(s.objects)} objects, ${String(s.eventTypes)} event types, ` +
            `${String(s.objectTypes)} object types, ${String(s.relationships)} E2O and ${String(s.objectRelationships)} O2O relationships${opts.out === undefined ? '' : ` to ${opts.out}`}\n`,
        )
      })
    })
}
