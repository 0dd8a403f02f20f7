import type { Command } from 'commander'
import { createKey, listKeys, parseRateLimit, revokeKey, setKeyRateLimit } from '../../write/admin.js'
import { printJson, withBackends } from '../context.js'
import { table } from '../text.js'

const RATE_LIMIT_HELP =
  "the key's own budget in requests per minute (1 to 1000000000), e.g. for a key that loads historical files beside the live keys; 'default' (or omitted): OCELOG_RATE_LIMIT_PER_MINUTE"

/** A key's budget as `keys list` and `keys create` print it. */
function budgetText(perMinute: number | null, defaultPerMinute: number): string {
  return perMinute === null ? `${String(defaultPerMinute)}/min (default)` : `${String(perMinute)}/min`
}

export function registerKeys(program: Command): void {
  const keys = program.command('keys').description('Create, list, update and revoke API keys')

  keys
    .command('create')
    .description('Create an API key for a new, automatically named dataset (or an existing one); the key is printed once')
    .requiredOption('--name <name>', 'name of the key, e.g. the sending application')
    .option('--dataset <id>', 'existing dataset the key writes to (default: a new dataset)')
    .option('--dataset-name <name>', 'name of the new dataset (default: dataset-<id>)')
    .option('--scopes <list>', 'comma-separated scopes: ingest:write, process:read (default: all)')
    .option('--rate-limit <per-minute>', RATE_LIMIT_HELP)
    .option('--json', 'print {"key_id","key","dataset_id","dataset_name","scopes","rate_limit_per_minute"} (null: the default)')
    .action(async (opts: { name: string; dataset?: string; datasetName?: string; scopes?: string; rateLimit?: string; json?: boolean }) => {
      const rateLimitPerMinute = opts.rateLimit === undefined ? null : parseRateLimit(opts.rateLimit)
      let defaultPerMinute = 0
      const created = await withBackends((b, cfg) => {
        defaultPerMinute = cfg.rateLimitPerMinute
        return createKey(b.keys, {
          name: opts.name,
          ...(opts.dataset === undefined ? {} : { datasetId: opts.dataset }),
          ...(opts.datasetName === undefined ? {} : { datasetName: opts.datasetName }),
          scopes:
            opts.scopes === undefined
              ? []
              : opts.scopes
                  .split(',')
                  .map((s) => s.trim())
                  .filter((s) => s !== ''),
          rateLimitPerMinute,
        })
      })
      if (opts.json === true) return printJson(created)
      process.stdout.write(
        `API key created. Store it now: it is shown this once and cannot be shown again.\n\n  ${created.key}\n\n` +
          `key id:   ${created.key_id}\ndataset:  ${created.dataset_id} (${created.dataset_name})\nscopes:   ${created.scopes.length === 0 ? 'all (no scopes given)' : created.scopes.join(', ')}\n` +
          `budget:   ${budgetText(created.rate_limit_per_minute, defaultPerMinute)}\n`,
      )
    })

  keys
    .command('list')
    .description('List API keys (never their secrets)')
    .option('--json', 'print a JSON array; rate_limit_per_minute is null for a key on the default')
    .action(async (opts: { json?: boolean }) => {
      let defaultPerMinute = 0
      const all = await withBackends((b, cfg) => {
        defaultPerMinute = cfg.rateLimitPerMinute
        return listKeys(b.keys)
      })
      if (opts.json === true) return printJson(all)
      if (all.length === 0) return void process.stdout.write('no API keys yet (create one: ocelog keys create --name NAME)\n')
      const rows = [['KEY ID', 'NAME', 'DATASET', 'SCOPES', 'RATE LIMIT', 'CREATED', 'REVOKED']]
      for (const k of all) {
        const scopes = k.scopes.length === 0 ? 'all' : k.scopes.join(',')
        rows.push([k.key_id, k.name, k.dataset_id, scopes, budgetText(k.rate_limit_per_minute, defaultPerMinute), k.created_at, k.revoked_at ?? '-'])
      }
      process.stdout.write(`${table(rows)}\n`)
    })

  keys
    .command('update')
    .description("Change an API key's own rate limit; a running service applies it from the key's next request")
    .argument('<key-id>', 'the key id (see: ocelog keys list)')
    .requiredOption('--rate-limit <per-minute>', RATE_LIMIT_HELP)
    .option('--json', 'print the updated key as JSON')
    .action(async (keyId: string, opts: { rateLimit: string; json?: boolean }) => {
      const perMinute = parseRateLimit(opts.rateLimit)
      let defaultPerMinute = 0
      const updated = await withBackends((b, cfg) => {
        defaultPerMinute = cfg.rateLimitPerMinute
        return setKeyRateLimit(b.keys, keyId, perMinute)
      })
      if (opts.json === true) return printJson(updated)
      process.stdout.write(`API key ${updated.key_id} (${updated.name}): budget ${budgetText(updated.rate_limit_per_minute, defaultPerMinute)}\n`)
    })

  keys
    .command('revoke')
    .description('Revoke an API key: requests with it answer 401 from then on')
    .argument('<key-id>', 'the key id (see: ocelog keys list)')
    .option('--json', 'print the revoked key as JSON')
    .action(async (keyId: string, opts: { json?: boolean }) => {
      const revoked = await withBackends((b) => revokeKey(b.keys, keyId))
      if (opts.json === true) return printJson(revoked)
      process.stdout.write(`revoked API key ${revoked.key_id} (${revoked.name}) at ${revoked.revoked_at ?? ''}\n`)
    })
}
