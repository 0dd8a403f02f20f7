import type { Command } from 'commander'
import { Compile } from 'typebox/compile'
import { Projector } from '../../../projections/projector.js'
import { exportOcel, summarize } from '../../ocel/export.js'
import { OcelJsonStrict } from '../../ocel/ocel-json.js'
import { isOcelForm, OCEL_FORMS, writeOcelForm } from '../../ocel/write-forms.js'
import type { EventLog } from '../../ports/event-log.js'
import { CheckpointConflictError, type ReadModelStore } from '../../ports/read-model-store.js'
import { CliError, withBackends } from '../context.js'

/** The projector whose read models are exported (the default name of Projector). */
const PROJECTOR = 'read-models'
const PAGE = 1000
/** Stop counting the lag here: the warning only needs to say that it is large. */
const LAG_COUNT_MAX = 100_000

const checkOcel = Compile(OcelJsonStrict)

/** Catches the read models up with the log; a projector elsewhere (a running `serve`) may move the checkpoint first, then retry from it. */
async function catchUp(projector: Projector): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await projector.catchUp()
    } catch (error) {
      if (!(error instanceof CheckpointConflictError) || attempt >= 10) throw error
    }
  }
}

interface Lag {
  checkpoint: number | null
  /** Records of the dataset's stream after the checkpoint (at most LAG_COUNT_MAX). */
  behind: number
  lastPosition: number | null
}

/** How many records of `datasetId` the log holds beyond the read models' checkpoint. */
async function measureLag(log: EventLog, store: ReadModelStore, datasetId: string): Promise<Lag> {
  const checkpoint = await store.checkpoint(PROJECTOR)
  let after = checkpoint
  let behind = 0
  let lastPosition: number | null = null
  while (behind < LAG_COUNT_MAX) {
    const page = await log.readStream(datasetId, after, PAGE)
    const last = page[page.length - 1]
    if (last === undefined) break
    behind += page.length
    lastPosition = last.position
    after = last.position
    if (page.length < PAGE) break
  }
  return { checkpoint, behind, lastPosition }
}

export function registerExport(program: Command): void {
  program
    .command('export')
    .description(
      'Write a dataset as an OCEL 2.0 log in JSON, XML or SQLite (from the read models; on the embedded default the projector catches up first, so every accepted record is in it)',
    )
    .requiredOption('--dataset <id>', 'dataset id (see: ocelog datasets list)')
    .option('--format <form>', `OCEL 2.0 form: ${OCEL_FORMS.join(', ')} (sqlite needs --out)`, 'json')
    .option('--out <file>', 'write to this file instead of stdout (replaced atomically)')
    .option('--pretty', 'indent the JSON (2 spaces)')
    .action(async (opts: { dataset: string; format: string; out?: string; pretty?: boolean }) => {
      const form = opts.format
      if (!isOcelForm(form)) throw new CliError(`--format ${form}: must be one of ${OCEL_FORMS.join(', ')}`)
      if (form === 'sqlite' && opts.out === undefined) throw new CliError('--format sqlite writes a binary file: give it with --out FILE')
      await withBackends(async (b) => {
        if ((await b.keys.findDataset(opts.dataset)) === null) throw new CliError(`dataset "${opts.dataset}" does not exist (see: ocelog datasets list)`)
        if (b.mode === 'embedded') {
          await catchUp(new Projector(b.log, b.readModels, { name: PROJECTOR }))
        } else {
          const lag = await measureLag(b.log, b.readModels, opts.dataset)
          if (lag.behind > 0) {
            const count = lag.behind >= LAG_COUNT_MAX ? `at least ${String(lag.behind)}` : String(lag.behind)
            process.stderr.write(
              `ocelog: warning: the read models lag ${count} record(s) of dataset ${opts.dataset} behind the log ` +
                `(checkpoint ${PROJECTOR} at ${lag.checkpoint === null ? 'none' : String(lag.checkpoint)}, last record at ${String(lag.lastPosition)}); ` +
                'the export holds only what the projector has applied\n',
            )
          }
        }

        const doc = await exportOcel(b.readModels, opts.dataset)
        if (!checkOcel.Check(doc)) {
          const first = checkOcel.Errors(doc)[0]
          throw new CliError(
            `the export is not a valid OCEL 2.0 document (a bug in Ocelog, please report it): ${first === undefined ? 'unknown reason' : `${first.instancePath || '/'}: ${first.message}`}`,
          )
        }
        writeOcelForm(doc, form, opts.out, opts.pretty === true)
        const s = summarize(doc)
        process.stderr.write(
          `exported dataset ${opts.dataset}: ${String(s.events)} events, ${String(s.objects)} objects, ${String(s.eventTypes)} event types, ` +
            `${String(s.objectTypes)} object types, ${String(s.relationships)} E2O relationships${opts.out === undefined ? '' : ` to ${opts.out}`}\n`,
        )
      })
    })
}
