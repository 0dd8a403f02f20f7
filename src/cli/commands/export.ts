import type { Command } from 'commander'
import { renameSync, writeFileSync } from 'node:fs'
import { Compile } from 'typebox/compile'
import { READ_MODELS_PROJECTION } from '../../../projections/checkpoints.js'
import { exportOcel, summarize } from '../../ocel/export.js'
import { OcelJsonStrict } from '../../ocel/ocel-json.js'
import { datasetLag, LAG_COUNT_MAX } from '../../status.js'
import { catchUpReadModels } from '../catch-up.js'
import { CliError, withBackends } from '../context.js'

/** The projector whose read models are exported (shards: `read-models-i-of-n`). */
const PROJECTOR = READ_MODELS_PROJECTION

const checkOcel = Compile(OcelJsonStrict)

export function registerExport(program: Command): void {
  program
    .command('export')
    .description(
      'Write a dataset as an OCEL 2.0 JSON log (from the read models; on the embedded default the projector catches up first, so every accepted record is in it)',
    )
    .requiredOption('--dataset <id>', 'dataset id (see: ocelog datasets list)')
    .option('--out <file>', 'write to this file instead of stdout')
    .option('--pretty', 'indent the JSON (2 spaces)')
    .action(async (opts: { dataset: string; out?: string; pretty?: boolean }) => {
      await withBackends(async (b) => {
        if ((await b.keys.findDataset(opts.dataset)) === null) throw new CliError(`dataset "${opts.dataset}" does not exist (see: ocelog datasets list)`)
        if (b.mode === 'embedded') {
          await catchUpReadModels(b)
        } else {
          const lag = await datasetLag(b.log, b.readModels, opts.dataset, PROJECTOR)
          if (lag.behind > 0) {
            const count = lag.behind >= LAG_COUNT_MAX ? `at least ${String(lag.behind)}` : String(lag.behind)
            process.stderr.write(
              `ocelog: warning: the read models lag ${count} record(s) of dataset ${opts.dataset} behind the log ` +
                `(read models at ${lag.checkpoint === null ? 'none' : String(lag.checkpoint)}, last record at ${String(lag.lastPosition)}); ` +
                'the export holds only what the projector has applied\n',
            )
          }
        }

        const doc = await exportOcel(b.query, opts.dataset)
        if (!checkOcel.Check(doc)) {
          const first = checkOcel.Errors(doc)[0]
          throw new CliError(
            `the export is not a valid OCEL 2.0 document (a bug in Ocelog, please report it): ${first === undefined ? 'unknown reason' : `${first.instancePath || '/'}: ${first.message}`}`,
          )
        }
        const text = `${opts.pretty === true ? JSON.stringify(doc, null, 2) : JSON.stringify(doc)}\n`
        if (opts.out === undefined) {
          process.stdout.write(text)
        } else {
          // Write beside the target, then rename: a reader never sees half a file.
          const partial = `${opts.out}.partial-${String(process.pid)}`
          writeFileSync(partial, text)
          renameSync(partial, opts.out)
        }
        const s = summarize(doc)
        process.stderr.write(
          `exported dataset ${opts.dataset}: ${String(s.events)} events, ${String(s.objects)} objects, ${String(s.eventTypes)} event types, ` +
            `${String(s.objectTypes)} object types, ${String(s.relationships)} E2O relationships${opts.out === undefined ? '' : ` to ${opts.out}`}\n`,
        )
      })
    })
}
