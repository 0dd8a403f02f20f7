/**
 * Key and dataset administration (docs/api.md#authentication-and-scopes: keys and datasets), used by
 * `ocelog keys …` and `ocelog datasets …`. A key targets a new, automatically named dataset unless
 * an existing dataset is named.
 */
import { AdminError } from '../core/errors.js'
import { DATASET_ID, newDatasetId, newKeyToken } from '../core/api-keys.js'
import type { ApiKey, Dataset, KeyStore } from '../ports/key-store.js'
import { ALL_SCOPES, type Scope } from '../schemas/api.js'

export { AdminError }

export interface CreateKeyInput {
  name: string
  /** An existing dataset; omitted: a new, automatically named one. */
  datasetId?: string
  /** Name for the new dataset (ignored with datasetId). */
  datasetName?: string
  /** Empty or omitted: every scope (docs/api.md#authentication-and-scopes). */
  scopes?: readonly string[]
  /** The key's own budget in requests per minute; omitted or null: the service's default (docs/rate-limits.md#the-default-and-a-keys-own-budget). */
  rateLimitPerMinute?: number | null
  now?: Date
}

/** What `ocelog keys create --json` prints. The `key` is shown this once and never stored. */
export interface CreatedKey {
  key_id: string
  key: string
  dataset_id: string
  dataset_name: string
  scopes: Scope[]
  /** Requests per minute; null: the service's default, OCELOG_RATE_LIMIT_PER_MINUTE. */
  rate_limit_per_minute: number | null
}

/** The largest per-key budget accepted, as for OCELOG_RATE_LIMIT_PER_MINUTE. */
export const RATE_LIMIT_MAX = 1_000_000_000

/**
 * Reads a `--rate-limit` value (docs/rate-limits.md#the-default-and-a-keys-own-budget): a whole number of requests per minute from
 * 1 to 1,000,000,000, or `default` for the service's OCELOG_RATE_LIMIT_PER_MINUTE (returned as null).
 * @throws AdminError naming the value and the rule.
 */
export function parseRateLimit(text: string): number | null {
  const t = text.trim()
  if (t.toLowerCase() === 'default') return null
  if (!/^[0-9]+$/.test(t))
    throw new AdminError(`--rate-limit "${text}" must be a whole number of requests per minute (1 to ${String(RATE_LIMIT_MAX)}) or "default"`)
  const n = Number(t)
  if (n < 1 || n > RATE_LIMIT_MAX) throw new AdminError(`--rate-limit ${t} must be from 1 to ${String(RATE_LIMIT_MAX)} requests per minute, or "default"`)
  return n
}

function checkRateLimit(perMinute: number | null): number | null {
  if (perMinute === null) return null
  if (!Number.isInteger(perMinute) || perMinute < 1 || perMinute > RATE_LIMIT_MAX) {
    throw new AdminError(`rate limit ${String(perMinute)} must be a whole number of requests per minute from 1 to ${String(RATE_LIMIT_MAX)}`)
  }
  return perMinute
}

function parseScopes(scopes: readonly string[]): Scope[] {
  const out: Scope[] = []
  for (const s of scopes) {
    const scope = ALL_SCOPES.find((known) => known === s)
    if (scope === undefined) throw new AdminError(`unknown scope "${s}"; known scopes: ${ALL_SCOPES.join(', ')}`)
    if (!out.includes(scope)) out.push(scope)
  }
  return out
}

/**
 * Creates an API key (and its dataset unless `datasetId` names an existing one).
 * @throws AdminError for an empty name, an unknown scope, a rate limit that is not a whole number
 * from 1 to RATE_LIMIT_MAX, or a dataset id that does not exist.
 */
export async function createKey(keys: KeyStore, input: CreateKeyInput): Promise<CreatedKey> {
  const name = input.name.trim()
  if (name.length === 0 || name.length > 200) throw new AdminError('key name must be 1 to 200 characters')
  const scopes = parseScopes(input.scopes ?? [])
  const rateLimit = checkRateLimit(input.rateLimitPerMinute ?? null)
  const now = (input.now ?? new Date()).toISOString()
  let dataset: Dataset
  if (input.datasetId !== undefined) {
    const found = await keys.findDataset(input.datasetId)
    if (found === null) throw new AdminError(`dataset "${input.datasetId}" does not exist; omit --dataset to create a new one (see: ocelog datasets list)`)
    dataset = found
  } else {
    const id = newDatasetId()
    if (!DATASET_ID.test(id)) throw new AdminError(`generated dataset id ${id} is not valid`)
    dataset = { id, name: input.datasetName?.trim() || `dataset-${id}`, created_at: now }
    await keys.createDataset(dataset)
  }
  const token = newKeyToken()
  const key: ApiKey = {
    key_id: token.keyId,
    name,
    dataset_id: dataset.id,
    scopes,
    secret_hash: token.secretHash,
    created_at: now,
    revoked_at: null,
    rate_limit_per_minute: rateLimit,
  }
  await keys.createKey(key)
  return { key_id: key.key_id, key: token.token, dataset_id: dataset.id, dataset_name: dataset.name, scopes, rate_limit_per_minute: rateLimit }
}

/** A key as listed: never its secret or hash. */
export type ListedKey = Omit<ApiKey, 'secret_hash'>

export async function listKeys(keys: KeyStore): Promise<ListedKey[]> {
  return (await keys.listKeys()).map(({ secret_hash: _hidden, ...rest }) => rest)
}

/** @throws AdminError when the key does not exist or is already revoked. */
export async function revokeKey(keys: KeyStore, keyId: string, now = new Date()): Promise<ListedKey> {
  const key = await keys.findKey(keyId)
  if (key === null) throw new AdminError(`no API key with id ${keyId} (see: ocelog keys list)`)
  if (key.revoked_at !== null) throw new AdminError(`API key ${keyId} was already revoked at ${key.revoked_at}`)
  await keys.revokeKey(keyId, now.toISOString())
  const { secret_hash: _hidden, ...rest } = key
  return { ...rest, revoked_at: now.toISOString() }
}

/**
 * Sets a key's own rate limit in requests per minute, or null to give it the service's default
 * (docs/rate-limits.md#the-default-and-a-keys-own-budget). A running service applies it from its next request with the key; the
 * count already made in the current window is kept.
 * @throws AdminError when the key does not exist or the limit is not a whole number from 1 to RATE_LIMIT_MAX.
 */
export async function setKeyRateLimit(keys: KeyStore, keyId: string, perMinute: number | null): Promise<ListedKey> {
  const limit = checkRateLimit(perMinute)
  const key = await keys.findKey(keyId)
  if (key === null || !(await keys.setRateLimit(keyId, limit))) throw new AdminError(`no API key with id ${keyId} (see: ocelog keys list)`)
  const { secret_hash: _hidden, ...rest } = key
  return { ...rest, rate_limit_per_minute: limit }
}
