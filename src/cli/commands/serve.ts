import type { Command } from 'commander'
import { config } from '../context.js'

export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('Run the HTTP API, and the projector in the same process (default on the embedded default and PostgreSQL, where its runners run under leases)')
    .option('--no-projector', 'do not run the projector in this process (run `ocelog project` instead)')
    .action(async (opts: { projector: boolean }) => {
      const cfg = config()
      // Loaded here so that other commands start without Fastify.
      const { startServer } = await import('../../app/server.js')
      const server = await startServer(cfg, opts.projector ? {} : { projector: false })
      const stop = (signal: string) => {
        server.app.log.info(`${signal}: finishing requests in flight, then stopping`)
        server.stop().then(
          () => process.exit(0),
          (error: unknown) => {
            server.app.log.error({ err: error }, 'shutdown failed')
            process.exit(1)
          },
        )
      }
      process.once('SIGINT', () => stop('SIGINT'))
      process.once('SIGTERM', () => stop('SIGTERM'))
    })
}
