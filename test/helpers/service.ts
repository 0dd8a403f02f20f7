/**
 * The built Ocelog service as a real process, for e2e tests: `node dist/src/cli/main.js serve` on a
 * free port of 127.0.0.1, with its own temp OCELOG_DATA_DIR (embedded SQLite, projector in process).
 *
 * ```ts
 * const service = await startService({ env: { OCELOG_RATE_LIMIT_PER_MINUTE: '60' } })
 * const key = await service.createKey()           // a new dataset: key.key, key.dataset_id
 * const summary = await service.importOcel('log.jsonocel', key.key)   // ocelog import --json
 * const doc = await service.exportOcel(key.dataset_id)                 // ocelog export, parsed
 * const r = await service.cli(['replay', '--dataset', key.dataset_id, '--json'])
 * await service.stop()                             // SIGTERM, waits for exit, removes the data dir
 * ```
 * Needs dist/ (`npm run build`; `npm test` builds first). CLI commands run against the same data
 * dir through test/helpers/cli.ts, so `keys`, `replay` and `export` see what the service stored.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { CreatedKey } from '../../src/write/admin.js'
import type { ImportSummary } from '../../src/ocel/import/summary.js'
import type { OcelJsonStrict } from '../../src/ocel/ocel-json.js'
import { requireBuild, runCli, type CliResult } from './cli.js'
import { freePort } from './free-port.js'
import { exited, spawnServe } from './serve-process.js'

export interface ServiceOptions {
  /** Extra environment of the service and of `cli()` (e.g. OCELOG_RATE_LIMIT_PER_MINUTE). */
  env?: Record<string, string>
  /** How long to wait for the service to listen (default 20 s). */
  readyTimeoutMs?: number
  /** Extra arguments of `ocelog serve`, e.g. `['--no-projector']`. */
  args?: string[]
  /** Extra node flags, after the service's own (SERVICE_NODE_FLAGS), e.g. `['--import', file]`. */
  nodeArgs?: string[]
}

export interface RunningService {
  /** Base URL, e.g. http://127.0.0.1:40123 */
  url: string
  port: number
  dataDir: string
  /** Runs `ocelog <args>` on the service's data dir (never rejects; see CliResult.code). */
  cli(args: string[], extraEnv?: Record<string, string>): Promise<CliResult>
  /** `ocelog keys create --json`: a key for a new dataset, or for `datasetId`. */
  createKey(options?: {
    name?: string
    datasetId?: string
    scopes?: string[] /** `--rate-limit`: the key's own requests per minute. */
    rateLimit?: number
  }): Promise<CreatedKey>
  /** `ocelog import FILE --url <this service> --key KEY --json [...extraArgs]`; rejects unless it exits 0. */
  importOcel(file: string, key: string, extraArgs?: string[]): Promise<ImportSummary>
  /** `ocelog export --dataset ID --out <file in the data dir>`, parsed; rejects unless it exits 0. */
  exportOcel(datasetId: string): Promise<OcelJsonStrict>
  /** What the service wrote on stderr so far (its log at LOG_LEVEL=warn). */
  stderr(): string
  /** SIGTERM, wait for the exit (SIGKILL after 10 s), then remove the data dir. Safe to call twice. */
  stop(): Promise<void>
}

/**
 * Starts the built service and waits until it answers HTTP.
 * @throws Error when dist/ is missing, or the process exits or stays silent before it listens
 *   (the message carries its stderr).
 */
export async function startService(options: ServiceOptions = {}): Promise<RunningService> {
  requireBuild()
  const dataDir = mkdtempSync(join(tmpdir(), 'ocelog-service-'))
  const port = await freePort()
  const env = { OCELOG_DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...options.env }
  const url = `http://127.0.0.1:${String(port)}`
  // As `npm start` runs it: the same node flags and environment.
  const child = spawnServe({ ...process.env, ...env }, { nodeArgs: options.nodeArgs, args: options.args })
  let stderr = ''
  child.stderr?.setEncoding('utf8')
  child.stderr?.on('data', (chunk: string) => {
    stderr += chunk
  })

  let stopped: Promise<void> | null = null
  const stop = () => {
    stopped ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM')
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
        await exited(child)
        clearTimeout(timer)
      }
      rmSync(dataDir, { recursive: true, force: true })
    })()
    return stopped
  }

  const deadline = Date.now() + (options.readyTimeoutMs ?? 20_000)
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      await stop()
      throw new Error(`ocelog serve exited (${String(child.exitCode ?? child.signalCode)}) before it listened:\n${stderr}`)
    }
    try {
      // Any HTTP answer (401 without a key) means it listens.
      await fetch(`${url}/v1/health`)
      break
    } catch {
      if (Date.now() > deadline) {
        await stop()
        throw new Error(`ocelog serve did not listen on ${url} within ${String(options.readyTimeoutMs ?? 20_000)} ms:\n${stderr}`)
      }
      await new Promise((r) => setTimeout(r, 50))
    }
  }

  const cli = (args: string[], extraEnv: Record<string, string> = {}) => runCli(dataDir, args, { ...env, ...extraEnv })
  const succeed = async (args: string[]) => {
    const r = await cli(args)
    if (r.code !== 0) throw new Error(`ocelog ${args[0] ?? ''} exited ${String(r.code)}:\n${r.stderr}\n${r.stdout}`)
    return r.stdout
  }
  let exports = 0
  return {
    url,
    port,
    dataDir,
    cli,
    async createKey(o = {}) {
      const args = ['keys', 'create', '--name', o.name ?? 'e2e', '--json']
      if (o.datasetId !== undefined) args.push('--dataset', o.datasetId)
      if (o.scopes !== undefined) args.push('--scopes', o.scopes.join(','))
      if (o.rateLimit !== undefined) args.push('--rate-limit', String(o.rateLimit))
      const created: CreatedKey = JSON.parse(await succeed(args))
      return created
    },
    async importOcel(file, key, extraArgs = []) {
      const summary: ImportSummary = JSON.parse(await succeed(['import', file, '--url', url, '--key', key, '--json', ...extraArgs]))
      return summary
    },
    async exportOcel(datasetId) {
      exports += 1
      const file = join(dataDir, `export-${String(exports)}.json`)
      await succeed(['export', '--dataset', datasetId, '--out', file])
      const doc: OcelJsonStrict = JSON.parse(readFileSync(file, 'utf8'))
      return doc
    },
    stderr: () => stderr,
    stop,
  }
}
