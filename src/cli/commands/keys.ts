import type { Command } from 'commander'
import { createKey, listKeys, revokeKey } from '../../write/admin.js'
import { printJson, table, withBackends } from '../context.js'

export function registerKeys(program: Command): void {
  const keys = program.command('keys').description('Create, list and revoke API keys')

  keys
    .command('create')
    .description('Create an API key for a new, automatically named dataset (or an existing one); the key is printed once')
    .requiredOption('--name <name>', 'name of the key, e.g. the sending application')
    .option('--dataset <id>', 'existing dataset the key writes to (default: a new dataset)')
    .option('--dataset-name <name>', 'name of the new dataset (default: dataset-<id>)')
    .option('--scopes <list>', 'comma-separated scopes: ingest:write, process:read (default: all)')
    .option('--json', 'print {"key_id","key","dataset_id","dataset_name","scopes"}')
    .action(async (opts: { name: string; dataset?: string; datasetName?: string; scopes?: string; json?: boolean }) => {
      const created = await withBackends((b) =>
        createKey(b.keys, {
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
        }),
      )
      if (opts.json === true) return printJson(created)
      process.stdout.write(
        `API key created. Store it now: it is shown this once and cannot be shown again.\n\n  ${created.key}\n\n` +
          `key id:   ${created.key_id}\ndataset:  ${created.dataset_id} (${created.dataset_name})\nscopes:   ${created.scopes.length === 0 ? 'all (no scopes given)' : created.scopes.join(', ')}\n`,
      )
    })

  keys
    .command('list')
    .description('List API keys (never their secrets)')
    .option('--json', 'print a JSON array')
    .action(async (opts: { json?: boolean }) => {
      const all = await withBackends((b) => listKeys(b.keys))
      if (opts.json === true) return printJson(all)
      if (all.length === 0) return void process.stdout.write('no API keys yet (create one: ocelog keys create --name NAME)\n')
      const rows = [['KEY ID', 'NAME', 'DATASET', 'SCOPES', 'CREATED', 'REVOKED']]
      for (const k of all) rows.push([k.key_id, k.name, k.dataset_id, k.scopes.length === 0 ? 'all' : k.scopes.join(','), k.created_at, k.revoked_at ?? '-'])
      process.stdout.write(`${table(rows)}\n`)
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
