import type { Command } from 'commander'
import { printJson, withBackends } from '../context.js'
import { table } from '../text.js'

export function registerDatasets(program: Command): void {
  const datasets = program.command('datasets').description('List datasets')
  datasets
    .command('list')
    .description('List datasets with the number of API keys of each')
    .option('--json', 'print a JSON array')
    .action(async (opts: { json?: boolean }) => {
      const rows = await withBackends(async (b) => {
        const [all, keys] = await Promise.all([b.keys.listDatasets(), b.keys.listKeys()])
        return all.map((d) => ({ ...d, keys: keys.filter((k) => k.dataset_id === d.id).length }))
      })
      if (opts.json === true) return printJson(rows)
      if (rows.length === 0) return void process.stdout.write('no datasets yet (ocelog keys create --name NAME makes one)\n')
      const out = [['DATASET ID', 'NAME', 'KEYS', 'CREATED']]
      for (const d of rows) out.push([d.id, d.name, String(d.keys), d.created_at])
      process.stdout.write(`${table(out)}\n`)
    })
}
