/**
 * `GET /metrics`: Prometheus text exposition format (prometheus.io, "Exposition formats"), from
 * prom-client. It needs no API key, so it belongs on a private network (OCELOG_METRICS=off turns
 * it off). Metrics:
 * - `ocelog_log_head_position`: position of the last record in the log;
 * - `ocelog_projection_position{projection}`: each checkpoint in the store (0 before the first apply);
 * - `ocelog_projection_lag_records{projection}`: records in the log after that checkpoint, up to
 *   the head (a count of records on every engine; exact on SQLite, a lower bound past 100,000 on
 *   EventStoreDB);
 * - `ocelog_projection_lag_seconds{projection}`: age of the oldest record not yet applied (0 when
 *   none is behind), from its append time;
 * - `ocelog_projection_stopped{projection}`: 1 when the projection stopped on a record it cannot apply;
 * - `ocelog_runner_lag_records{runner}` and `ocelog_runner_lag_seconds{runner}`: the largest lag of
 *   the projections each runner applies (docs/architecture.md#projection-runners-and-leases; a
 *   sharded runner by its lease name, `process-0-of-2`);
 * - `ocelog_read_models_recovered_total`: damaged read-models files moved aside (both files each time)
 *   and rebuilt from the log by this process (embedded default; README § Operations);
 * - `ocelog_http_requests_total{method,route,status}` and `ocelog_http_request_duration_seconds{…}`
 *   (route is the route pattern, `unmatched` for unknown paths);
 * - prom-client's default process metrics (`process_*`, `nodejs_*`).
 */
import type { FastifyInstance } from 'fastify'
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client'
import { runnerOfCheckpoint } from '../projector/runners.js'
import type { EventLog } from '../ports/event-log.js'
import type { ReadModelStore } from '../ports/read-model-store.js'
import { readStatus } from '../projector/status.js'

export interface MetricsSource {
  log: EventLog
  readModels: ReadModelStore
  /** Projections to show before they have a checkpoint (unless their shards are in the store). */
  projections?: readonly string[]
  /** Damaged read-model files moved aside and rebuilt by this process (embedded default). */
  readModelsRecovered?: () => number
}

/** Latency buckets in seconds: from a single event (ms) to a slow batch (s). */
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

/**
 * Adds `GET /metrics` and the request metrics hook to `app` (call before registering routes, so
 * the hook sees every route). Each app gets its own registry.
 */
export function installMetrics(app: FastifyInstance, source: MetricsSource): void {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  const registers = [registry]
  const labelNames = ['method', 'route', 'status'] as const
  const requests = new Counter({
    name: 'ocelog_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status',
    labelNames,
    registers,
  })
  const duration = new Histogram({
    name: 'ocelog_http_request_duration_seconds',
    help: 'Time from receiving a request to sending its answer, by method, route pattern and status',
    labelNames,
    buckets: BUCKETS,
    registers,
  })
  const head = new Gauge({ name: 'ocelog_log_head_position', help: 'Position of the last record in the log (0 when empty)', registers })
  const position = new Gauge({
    name: 'ocelog_projection_position',
    help: 'Checkpoint of each projection: the last log position it applied (0 before its first apply)',
    labelNames: ['projection'],
    registers,
  })
  const lag = new Gauge({
    name: 'ocelog_projection_lag_records',
    help: 'Records in the log after the projection checkpoint, up to the head (exact on SQLite; at least this many on EventStoreDB past 100000)',
    labelNames: ['projection'],
    registers,
  })
  const lagSeconds = new Gauge({
    name: 'ocelog_projection_lag_seconds',
    help: 'Age of the oldest record not yet applied by the projection, from its append time (0 when none is behind)',
    labelNames: ['projection'],
    registers,
  })
  const stopped = new Gauge({
    name: 'ocelog_projection_stopped',
    help: '1 when the projection stopped on a record it cannot apply (see ocelog status), else 0',
    labelNames: ['projection'],
    registers,
  })

  const runnerLag = new Gauge({
    name: 'ocelog_runner_lag_records',
    help: 'Largest ocelog_projection_lag_records among the projections of the runner (entities, process; a shard by its lease name)',
    labelNames: ['runner'],
    registers,
  })
  const runnerLagSeconds = new Gauge({
    name: 'ocelog_runner_lag_seconds',
    help: 'Largest ocelog_projection_lag_seconds among the projections of the runner',
    labelNames: ['runner'],
    registers,
  })

  const recoveredCount = source.readModelsRecovered
  if (recoveredCount !== undefined) {
    new Counter({
      name: 'ocelog_read_models_recovered_total',
      help: 'Damaged read-models files moved aside (read-models.db.corrupt-<time>, read-models-process.db.corrupt-<time>) and rebuilt from the log by this process',
      registers,
      collect() {
        this.reset()
        this.inc(recoveredCount())
      },
    })
  }

  app.addHook('onResponse', async (req, reply) => {
    const labels = { method: req.method, route: req.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) }
    requests.inc(labels)
    duration.observe(labels, reply.elapsedTime / 1000)
  })

  app.get('/metrics', { schema: { hide: true } }, async (_req, reply) => {
    const status = await readStatus(source.log, source.readModels, source.projections ?? [])
    head.set(status.head ?? 0)
    for (const g of [position, lag, lagSeconds, stopped, runnerLag, runnerLagSeconds]) g.reset()
    const runners = new Map<string, { records: number; seconds: number }>()
    for (const p of status.projections) {
      position.set({ projection: p.projection }, p.position ?? 0)
      lag.set({ projection: p.projection }, p.lag_records)
      lagSeconds.set({ projection: p.projection }, p.lag_seconds)
      stopped.set({ projection: p.projection }, p.stopped === null ? 0 : 1)
      const runner = runnerOfCheckpoint(p.projection)
      if (runner === null) continue
      const was = runners.get(runner) ?? { records: 0, seconds: 0 }
      runners.set(runner, { records: Math.max(was.records, p.lag_records), seconds: Math.max(was.seconds, p.lag_seconds) })
    }
    for (const [runner, at] of runners) {
      runnerLag.set({ runner }, at.records)
      runnerLagSeconds.set({ runner }, at.seconds)
    }
    return reply.header('content-type', registry.contentType).send(await registry.metrics())
  })
}
