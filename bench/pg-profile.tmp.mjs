// Temporary profiling script (not committed): appends the batch scenario's bodies to a PostgreSQL log, then times each runner's catch-up.
import { startPostgresServer } from '../dist/bench/postgres-server.js'
import { bodySource } from '../dist/bench/bodies.js'
import { openPostgresPool } from '../dist/src/adapters/postgres/connection.js'
import { migrate } from '../dist/src/adapters/postgres/schema.js'
import { PostgresEventLog } from '../dist/src/adapters/postgres/postgres-event-log.js'
import { PostgresReadModelStore } from '../dist/src/adapters/postgres/postgres-read-model-store.js'
import { Ingest } from '../dist/src/write/ingest.js'
import { Projector } from '../dist/src/projector/runner.js'
import { projectorOptions } from '../dist/src/projector/options.js'
const n = Number(process.argv[2] ?? 200)
const runner = process.argv[3] === 'all' ? undefined : process.argv[3]
const server = await startPostgresServer({ shared_buffers: '256MB', max_wal_size: '2GB', shared_preload_libraries: 'pg_stat_statements' })
try {
  const url = await server.createDatabase('prof')
  const pool = openPostgresPool(url, { max: 4 })
  await migrate(pool)
  const log = new PostgresEventLog(pool)
  const ingest = new Ingest(log)
  const next = bodySource('batch', 1, 'p')
  for (let i = 0; i < n; i++) {
    const body = JSON.parse(next())
    await ingest.recordEvents(body.events, { datasetId: 'ds', keyId: 'k', requestId: 'r', receivedAt: new Date().toISOString() })
  }
  const head = await log.lastPosition()
  await pool.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements')
  await pool.query('SELECT pg_stat_statements_reset()')
  const store = new PostgresReadModelStore(pool)
  for (const r of runner === undefined ? ['entities', 'process'] : [runner]) {
    const p = new Projector(log, store, projectorOptions('process', { runner: r }))
    const t = performance.now()
    const k = await p.catchUp()
    const s = (performance.now() - t) / 1000
    console.log(
      `${r}: ${k} records in ${s.toFixed(2)} s = ${Math.round(k / s)} records/s (head ${head}); rss ${Math.round(process.memoryUsage().rss / 2 ** 20)} MB`,
    )
  }
  const st = await pool.query(
    "SELECT calls, round(total_exec_time) AS ms, rows, left(regexp_replace(query, '\\s+', ' ', 'g'), 110) AS q FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 14",
  )
  for (const r of st.rows) console.log(String(r.ms).padStart(7), String(r.calls).padStart(6), String(r.rows).padStart(8), r.q)
  await log.close()
  await pool.end()
} finally {
  server.remove()
}
const u = process.cpuUsage()
console.log(`node cpu ${((u.user + u.system) / 1e6).toFixed(1)} s`)
