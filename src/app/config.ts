/**
 * Configuration (README § Configuration): one TypeBox schema, validated at start. A bad value
 * stops the process with a message that names the variable.
 */
import { ConfigError } from '../core/errors.js'
import { Type, type Static } from 'typebox'
import { Compile } from 'typebox/compile'
import { LIMITS } from '../core/limits.js'

const IntString = (description: string) => Type.String({ pattern: '^[0-9]+$', description })

export const EnvSchema = Type.Object({
  PORT: Type.Optional(IntString('TCP port of the HTTP server (default 8080)')),
  HOST: Type.Optional(Type.String({ minLength: 1, description: 'Interface to listen on (default 0.0.0.0)' })),
  OCELOG_DATA_DIR: Type.Optional(Type.String({ minLength: 1, description: 'Folder of the embedded SQLite file (default ./data)' })),
  EVENTSTORE_URL: Type.Optional(Type.String({ pattern: '^esdb(\\+discover)?://', description: 'EventStoreDB connection string' })),
  MONGODB_URL: Type.Optional(Type.String({ pattern: '^mongodb(\\+srv)?://', description: 'MongoDB connection string' })),
  POSTGRES_URL: Type.Optional(
    Type.String({
      pattern: '^postgres(ql)?://',
      description: 'PostgreSQL connection string (libpq URI, e.g. postgres://ocelog@db:5432/ocelog): the log, the keys and the rate limits there',
    }),
  ),
  OCELOG_POSTGRES_POOL_SIZE: Type.Optional(IntString('Connections of each process to PostgreSQL (default 10)')),
  REDIS_URL: Type.Optional(Type.String({ pattern: '^rediss?://', description: 'Redis URL for shared rate limits' })),
  OCELOG_RATE_LIMIT_PER_MINUTE: Type.Optional(IntString('Requests per minute per API key (default 1200)')),
  OCELOG_RATE_LIMIT_WINDOW_SECONDS: Type.Optional(
    IntString('Length of the rate-limit window in seconds (default 60); the budget is the per-minute rate scaled to it'),
  ),
  OCELOG_BODY_LIMIT_BYTES: Type.Optional(IntString('Largest request body in bytes (default 5242880)')),
  OCELOG_ALLOWED_HOSTS: Type.Optional(
    Type.String({
      pattern: '^[^,\\s]+(,[^,\\s]+)*$',
      description:
        'Comma-separated host names that the Host and Origin headers of /mcp may name (DNS rebinding protection); default: loopback, the machine’s host name and its addresses',
    }),
  ),
  OCELOG_METRICS: Type.Optional(
    Type.Union([Type.Literal('on'), Type.Literal('off')], {
      description: 'GET /metrics in the Prometheus text format, without a key: on (default) or off; for a private network',
    }),
  ),
  LOG_LEVEL: Type.Optional(
    Type.Union(
      ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
      {
        description: 'pino log level (default info)',
      },
    ),
  ),
})
export type Env = Static<typeof EnvSchema>

export interface Config {
  port: number
  host: string
  dataDir: string
  eventstoreUrl: string | null
  mongodbUrl: string | null
  /** POSTGRES_URL: the PostgreSQL backend (docs/operations.md#production-on-postgresql), or null. */
  postgresUrl: string | null
  /** OCELOG_POSTGRES_POOL_SIZE: connections per process (default 10). */
  postgresPoolSize: number
  redisUrl: string | null
  rateLimitPerMinute: number
  /** Window of the fixed-window rate limiter, seconds (default 60). */
  rateLimitWindowSeconds: number
  bodyLimitBytes: number
  /** Serve GET /metrics (OCELOG_METRICS, default on). */
  metrics: boolean
  logLevel: string
  /** Host names /mcp answers to (OCELOG_ALLOWED_HOSTS), or null for the default. */
  allowedHosts: string[] | null
}

export { ConfigError }

const checkEnv = Compile(EnvSchema)
const KNOWN = Object.keys(EnvSchema.properties)

function positive(name: string, raw: string | undefined, fallback: number, max: number): number {
  if (raw === undefined) return fallback
  const n = Number(raw)
  if (!Number.isSafeInteger(n) || n < 1 || n > max) throw new ConfigError(`${name}=${raw}: must be a whole number from 1 to ${String(max)}`)
  return n
}

/**
 * Reads the configuration from environment variables.
 * @throws ConfigError naming the first bad variable and the rule it breaks.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const picked: Record<string, string> = {}
  for (const k of KNOWN) {
    const v = env[k]
    if (v !== undefined && v !== '') picked[k] = v
  }
  if (!checkEnv.Check(picked)) {
    const first = [...checkEnv.Errors(picked)][0]
    const name = first === undefined ? '' : first.instancePath.replace(/^\//, '')
    const prop = (EnvSchema.properties as Record<string, { description?: string }>)[name]
    throw new ConfigError(`${name}=${picked[name] ?? ''}: ${first?.message ?? 'invalid'}${prop?.description === undefined ? '' : ` (${prop.description})`}`)
  }
  const e: Env = picked
  if ((e.EVENTSTORE_URL === undefined) !== (e.MONGODB_URL === undefined)) {
    throw new ConfigError(
      'EVENTSTORE_URL and MONGODB_URL go together: the production log (EventStoreDB) needs the MongoDB read models and key store, and the reverse',
    )
  }
  if (e.POSTGRES_URL !== undefined && (e.EVENTSTORE_URL !== undefined || e.MONGODB_URL !== undefined)) {
    throw new ConfigError(
      'POSTGRES_URL goes alone: it selects the PostgreSQL backend, and EVENTSTORE_URL/MONGODB_URL select EventStoreDB and MongoDB; set one backend',
    )
  }
  return {
    port: positive('PORT', e.PORT, 8080, 65535),
    host: e.HOST ?? '0.0.0.0',
    dataDir: e.OCELOG_DATA_DIR ?? './data',
    eventstoreUrl: e.EVENTSTORE_URL ?? null,
    mongodbUrl: e.MONGODB_URL ?? null,
    postgresUrl: e.POSTGRES_URL ?? null,
    postgresPoolSize: positive('OCELOG_POSTGRES_POOL_SIZE', e.OCELOG_POSTGRES_POOL_SIZE, 10, 1000),
    redisUrl: e.REDIS_URL ?? null,
    rateLimitPerMinute: positive('OCELOG_RATE_LIMIT_PER_MINUTE', e.OCELOG_RATE_LIMIT_PER_MINUTE, 1200, 1_000_000_000),
    rateLimitWindowSeconds: positive('OCELOG_RATE_LIMIT_WINDOW_SECONDS', e.OCELOG_RATE_LIMIT_WINDOW_SECONDS, 60, 3600),
    bodyLimitBytes: positive('OCELOG_BODY_LIMIT_BYTES', e.OCELOG_BODY_LIMIT_BYTES, LIMITS.bodyBytesDefault, 1024 * 1024 * 1024),
    metrics: e.OCELOG_METRICS !== 'off',
    logLevel: e.LOG_LEVEL ?? 'info',
    allowedHosts: e.OCELOG_ALLOWED_HOSTS === undefined ? null : e.OCELOG_ALLOWED_HOSTS.split(',').map((h) => h.toLowerCase()),
  }
}
