import type { Command } from 'commander'
import { createRequire } from 'node:module'
import { openBackends } from '../../app/composition.js'
import { catchUpReadModels } from '../../projector/catch-up.js'
import { CliError, config } from '../context.js'

const pkg = createRequire(import.meta.url)('../../../../package.json') as { version: string }

/**
 * `ocelog mcp --dataset ID`: the read tools of `/mcp` over stdio (Model Context Protocol,
 * § Transports, stdio) for an agent on this machine, reading the configured database directly
 * (no API key: whoever can open the database may read it). On the embedded default the read
 * models are brought up to date from the log before each tool call. stdout carries only MCP
 * messages; messages for people go to stderr. The MCP SDK is loaded when the command runs, so
 * that other commands (`serve` above all) do not carry it.
 */
export function registerMcp(program: Command): void {
  program
    .command('mcp')
    .description(
      'Serve the read tools (summary, process map, performance, variants, type relations, compare, events, objects, types) to an MCP client over stdio, for one dataset',
    )
    .requiredOption('--dataset <id>', 'dataset id (see: ocelog datasets list)')
    .action(async (opts: { dataset: string }) => {
      const [{ StdioServerTransport }, { createReadServer }, { ProcessReader }] = await Promise.all([
        import('@modelcontextprotocol/sdk/server/stdio.js'),
        import('../../mcp/server.js'),
        import('../../read/process-reader.js'),
      ])
      const backends = await openBackends(config())
      const closing = async () => {
        await backends.close()
      }
      try {
        if ((await backends.keys.findDataset(opts.dataset)) === null) throw new CliError(`dataset "${opts.dataset}" does not exist (see: ocelog datasets list)`)
        const embedded = backends.mode === 'embedded'
        const beforeCall = embedded
          ? async () => {
              await catchUpReadModels(backends)
            }
          : undefined
        const reader = new ProcessReader({ query: backends.query, log: backends.log })
        const server = createReadServer(reader, opts.dataset, { version: pkg.version, ...(beforeCall === undefined ? {} : { beforeCall }) })
        const transport = new StdioServerTransport()
        transport.onclose = () => {
          void closing().then(() => process.exit(0))
        }
        process.stdin.on('end', () => {
          void server.close()
        })
        await server.connect(transport)
        process.stderr.write(`ocelog mcp: serving dataset ${opts.dataset} over stdio (${backends.describe})\n`)
      } catch (error) {
        await closing()
        throw error
      }
    })
}
