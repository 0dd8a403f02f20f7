/**
 * `node dist/bench/pg-window-map.js --url URL --from ISO --to ISO`: times the process map of one
 * time window on PostgreSQL (postgresProcessMap, docs/process-map.md#the-directly-follows-read-model)
 * on a database that already holds projected read models, e.g. the server folder that
 * `node dist/bench/scale.js --postgres --keep` leaves (start it again with `pg_ctl start`). One
 * warm-up run, then `--runs` timed runs; prints each run with this process's CPU time, the median,
 * the answer's size and a SHA-256 of its JSON, so that two builds' answers on the same data can be
 * compared. With `--pg-data DIR` (a server on this machine, Linux) it also prints the CPU time the
 * server's processes spent over the timed runs (/proc: the postmaster of DIR/postmaster.pid, its
 * children, and the children it has reaped), which a machine shared with other work disturbs less
 * than the elapsed time.
 */
import { createHash } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Command, InvalidArgumentError } from 'commander'
import { openPostgresPool } from '../src/adapters/postgres/connection.js'
import { postgresProcessMap } from '../src/adapters/postgres/postgres-df-query.js'
import { sqlReader } from '../src/adapters/postgres/postgres-reads.js'
import type { ProcessMapAnswer } from '../src/ports/read-model-query.js'
import { positiveInt } from './int-options.js'
import { median } from './report.js'

interface Options {
  url: string
  dataset?: string
  from: string
  to: string
  runs: number
  pgData?: string
}

/** CPU time (ms) of the server whose data directory is `dir`: its postmaster's own and reaped children's, and its live children's. */
function serverCpuMs(dir: string): number {
  const postmaster = Number(readFileSync(join(dir, 'postmaster.pid'), 'utf8').split('\n')[0])
  const ticks = (pid: string): { ppid: number; own: number; reaped: number } | null => {
    let stat: string
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    } catch {
      return null
    }
    // Fields after the command's closing parenthesis: state ppid … utime (14) stime cutime cstime (proc(5)).
    const f = stat
      .slice(stat.lastIndexOf(')') + 2)
      .split(' ')
      .map(Number)
    return { ppid: f[1] ?? 0, own: (f[11] ?? 0) + (f[12] ?? 0), reaped: (f[13] ?? 0) + (f[14] ?? 0) }
  }
  let total = 0
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue
    const t = ticks(pid)
    if (t === null) continue
    if (Number(pid) === postmaster) total += t.own + t.reaped
    else if (t.ppid === postmaster) total += t.own
  }
  // USER_HZ is 100 on Linux (proc(5)).
  return total * 10
}

/** The answer's activities, edges and a SHA-256 of its JSON (first 16 hex digits). */
function fingerprint(answer: ProcessMapAnswer): string {
  const activities = answer.object_types.reduce((n, m) => n + m.activities.length, 0)
  const edges = answer.object_types.reduce((n, m) => n + m.edges.length, 0)
  const sha = createHash('sha256').update(JSON.stringify(answer)).digest('hex').slice(0, 16)
  return `${String(answer.object_types.length)} object types, ${String(activities)} activities, ${String(edges)} edges, sha256 ${sha}`
}

async function main(o: Options): Promise<void> {
  if (Date.parse(o.to) <= Date.parse(o.from)) throw new Error('--to must be later than --from')
  const pool = openPostgresPool(o.url, { max: 2 })
  try {
    const sql = sqlReader(() => pool)
    let dataset = o.dataset
    if (dataset === undefined) {
      const ids = await sql.rows<{ dataset_id: string }>('SELECT DISTINCT dataset_id FROM ocelog.rm_df_aggregates LIMIT 2', [])
      if (ids.length !== 1) throw new Error(`the database holds ${String(ids.length)} datasets with a process map: name one with --dataset`)
      dataset = ids[0]?.dataset_id ?? ''
    }
    const window = await sql.rows<{ events: number; steps: number }>(
      'SELECT COUNT(DISTINCT pos) AS events, COUNT(*) AS steps FROM ocelog.rm_df_steps WHERE dataset_id = $1 AND t >= $2 AND t < $3',
      [dataset, Date.parse(o.from), Date.parse(o.to)],
    )
    console.log(`dataset ${dataset}, window ${o.from} to ${o.to}: ${String(window[0]?.events)} events, ${String(window[0]?.steps)} steps`)
    const filter = { from: o.from, to: o.to }
    const warm = await postgresProcessMap(sql, dataset, filter)
    console.log(`warm-up: ${fingerprint(warm)}`)
    const times: number[] = []
    const serverAtStart = o.pgData === undefined ? 0 : serverCpuMs(o.pgData)
    for (let run = 1; run <= o.runs; run += 1) {
      const started = performance.now()
      const cpu = process.cpuUsage()
      await postgresProcessMap(sql, dataset, filter)
      const ms = performance.now() - started
      const used = process.cpuUsage(cpu)
      times.push(ms)
      console.log(`run ${String(run)} of ${String(o.runs)}: ${ms.toFixed(1)} ms (CPU ${((used.user + used.system) / 1000).toFixed(1)} ms)`)
    }
    console.log(`median of ${String(times.length)}: ${median(times).toFixed(1)} ms (${Math.min(...times).toFixed(1)}–${Math.max(...times).toFixed(1)} ms)`)
    if (o.pgData !== undefined) console.log(`server CPU: ${((serverCpuMs(o.pgData) - serverAtStart) / o.runs).toFixed(0)} ms a run`)
  } finally {
    await pool.end()
  }
}

/** An ISO 8601 date-time with `Z` or an offset, as the window's bounds take it (docs/process-map.md#definitions). */
function isoTime(v: string): string {
  if (!/(Z|[+-]\d\d:\d\d)$/.test(v) || Number.isNaN(Date.parse(v))) throw new InvalidArgumentError('must be an ISO 8601 date-time with Z or an offset')
  return v
}

const program = new Command('pg-window-map')
  .description('times the PostgreSQL process map of one time window (median of runs after a warm-up)')
  .requiredOption('--url <url>', 'postgres:// URL of a database with projected read models (schema ocelog)')
  .option('--dataset <id>', 'the dataset (default: the only one with a process map)')
  .requiredOption('--from <iso>', 'the window’s start (ISO 8601, inclusive)', isoTime)
  .requiredOption('--to <iso>', 'the window’s end (ISO 8601, exclusive; later than --from)', isoTime)
  .option('--runs <n>', 'timed runs after one warm-up', positiveInt, 5)
  .option('--pg-data <dir>', 'the server’s data directory, when it runs on this machine: report its processes’ CPU time too')
  .parse()

main(program.opts<Options>()).catch((error: unknown) => {
  process.stderr.write(`pg-window-map: ${error instanceof Error ? error.message : String(error)}\n`)
  process.exit(1)
})
