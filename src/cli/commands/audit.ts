/**
 * `ocelog digest` and `ocelog verify` (README § Operations, docs/operations.md § Verify and §
 * Digests): a dataset's digest for an auditor to keep, the log's and read models' checks, and a
 * history checked against a digest.
 */
import type { Command } from 'commander'
import { AUDIT_CHAIN_FORMAT, isChainHash } from '../../core/audit-chain.js'
import { type CheckResult, verifyLogFile, verifyReadModelsFile } from '../../adapters/sqlite/log/verify-files.js'
import { verifyDigest } from '../../read/audit-check.js'
import type { Digest } from '../../schemas/audit.js'
import type { Backends } from '../../app/composition.js'
import { catchUpReadModels } from '../../projector/catch-up.js'
import { CliError, config, printJson, withBackends } from '../context.js'

function wholeNumber(option: string, text: string): number {
  const n = Number(text)
  if (!Number.isSafeInteger(n) || n < 0) throw new CliError(`${option} ${text}: must be a log position (a whole number ≥ 0)`)
  return n
}

async function requireDataset(b: Backends, datasetId: string): Promise<void> {
  if ((await b.keys.findDataset(datasetId)) === null) throw new CliError(`dataset "${datasetId}" does not exist (see: ocelog datasets list)`)
}

/**
 * The dataset's digest at `position` (null: its last record) from the audit read model; on the
 * embedded default the read models catch up with the log first.
 * @throws CliError when the read models have not reached `position` (a projector elsewhere lags).
 */
export async function readDigest(b: Backends, datasetId: string, position: number | null): Promise<Digest> {
  const reached = b.mode !== 'production' ? await catchUpReadModels(b) : await b.query.asOf()
  if (position !== null && reached < position) {
    throw new CliError(
      `the read models have reached position ${String(reached)}, not ${String(position)}; run again when the projector has caught up (ocelog status)`,
    )
  }
  const entry = await b.query.auditChainAt(datasetId, position)
  return {
    dataset_id: datasetId,
    format: AUDIT_CHAIN_FORMAT,
    position: entry?.position ?? null,
    records: entry?.seq ?? 0,
    hash: entry?.hash ?? '0'.repeat(64),
  }
}

export function registerAudit(program: Command): void {
  program
    .command('digest')
    .description(
      "Print a dataset's digest: the hash of its audit chain at its last record (or at --position), for an auditor to keep; `ocelog verify --digest` checks the history against it later",
    )
    .requiredOption('--dataset <id>', 'dataset id (see: ocelog datasets list)')
    .option('--position <n>', 'the digest at this log position (the last record at or before it); default: the last record')
    .option('--json', 'print JSON: {dataset_id, format, position, records, hash}')
    .action(async (opts: { dataset: string; position?: string; json?: boolean }) => {
      const position = opts.position === undefined ? null : wholeNumber('--position', opts.position)
      const digest = await withBackends(async (b) => {
        await requireDataset(b, opts.dataset)
        return readDigest(b, opts.dataset, position)
      })
      if (opts.json === true) return printJson(digest)
      process.stdout.write(
        `dataset ${digest.dataset_id}: ${String(digest.records)} record(s) up to position ${String(digest.position ?? 'none')}, chain format ${String(digest.format)}\n` +
          `sha256 ${digest.hash}\n` +
          `check later: ocelog verify --dataset ${digest.dataset_id} --position ${String(digest.position ?? 0)} --digest ${digest.hash}\n`,
      )
    })

  program
    .command('verify')
    .description(
      "Check the embedded default's files: the log (integrity_check; every record decodes, positions increase, each record in its dataset's stream) and the read models (quick_check; checkpoints not beyond the log's head). " +
        'With --dataset, --position and --digest: recompute the dataset’s audit chain from the log and check the history up to that position against the digest. Exits 1 naming the first bad position or table',
    )
    .option('--dataset <id>', 'with --digest and --position: the dataset whose history is checked')
    .option('--digest <hash>', 'a digest from ocelog digest (64 hex characters)')
    .option('--position <n>', 'the log position the digest is for')
    .option(
      '--json',
      'print JSON: {ok, checks: [{check, ok, detail, position?, table?}]} or, with --digest, {ok, dataset_id, position, records, recomputed, expected, unchanged, first_changed, compared}',
    )
    .action(async (opts: { dataset?: string; digest?: string; position?: string; json?: boolean }) => {
      if (opts.digest !== undefined || opts.dataset !== undefined) {
        if (opts.digest === undefined || opts.dataset === undefined || opts.position === undefined)
          throw new CliError('--dataset, --digest and --position go together')
        const expected = opts.digest.toLowerCase()
        if (!isChainHash(expected)) throw new CliError(`--digest ${opts.digest}: must be 64 hex characters (a digest from ocelog digest)`)
        const position = wholeNumber('--position', opts.position)
        const dataset = opts.dataset
        const check = await withBackends(async (b) => {
          await requireDataset(b, dataset)
          if (b.mode !== 'production') await catchUpReadModels(b)
          return verifyDigest(b.log, b.query, dataset, position, expected)
        })
        const ok = check.unchanged && check.first_changed === null
        if (!ok) process.exitCode = 1
        if (opts.json === true) return printJson({ ok, ...check })
        process.stdout.write(`${digestReport(check)}\n`)
        return
      }
      const cfg = config()
      if (cfg.eventstoreUrl !== null)
        throw new CliError('verify without --digest checks the embedded default’s files; EventStoreDB and MongoDB have their own checks (README § Operations)')
      const log = verifyLogFile(cfg.dataDir)
      const checks: CheckResult[] = [...log.checks, ...verifyReadModelsFile(cfg.dataDir, log.head)]
      const ok = checks.every((c) => c.ok)
      if (!ok) process.exitCode = 1
      if (opts.json === true) return printJson({ ok, data_dir: cfg.dataDir, head: log.head, records: log.records, checks })
      for (const c of checks) process.stdout.write(`${c.ok ? 'ok  ' : 'BAD '} ${c.check}: ${c.detail}\n`)
      process.stdout.write(ok ? `verified: ${String(log.records)} record(s) up to position ${String(log.head ?? 'none')}\n` : 'verify FAILED\n')
    })
}

/** The text report of verifyDigest: what is proven, and where the history changed. */
function digestReport(c: Awaited<ReturnType<typeof verifyDigest>>): string {
  const lines: string[] = []
  if (c.unchanged) {
    lines.push(
      `unchanged: the history of dataset ${c.dataset_id} up to position ${String(c.position)} (${String(c.records)} record(s)) gives the digest ${c.expected}`,
    )
  } else {
    lines.push(`CHANGED: the history of dataset ${c.dataset_id} up to position ${String(c.position)} gives ${c.recomputed}, not the digest ${c.expected}`)
  }
  const f = c.first_changed
  if (f !== null) {
    lines.push(
      `first changed record: position ${String(f.position)} (record ${String(f.seq)} of the dataset): the log ${f.stored === null ? 'has a record the audit chain lacks' : `and the audit chain differ (chain: position ${String(f.stored.position)}, hash ${f.stored.hash})`}`,
    )
  } else if (!c.unchanged) {
    lines.push(
      'the audit read model agrees with the log as it is now, so it was rebuilt after the change (or the digest is of another history): the changed record cannot be located from it; compare a replay --with-hashes kept from before',
    )
  }
  return lines.join('\n')
}
