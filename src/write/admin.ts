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
  now?: Date
}

/** What `ocelog keys create --json` prints. The `key` is shown this once and never stored. */
export interface CreatedKey {
  key_id: string
  key: string
  dataset_id: string
  dataset_name: string
  scopes: Scope[]
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
 * @throws AdminError for an empty name, an unknown scope, or a dataset id that does not exist.
 */
export async function createKey(keys: KeyStore, input: CreateKeyInput): Promise<CreatedKey> {
  const name = input.name.trim()
  if (name.length === 0 || name.length > 200) throw new AdminError('key name must be 1 to 200 characters')
  const scopes = parseScopes(input.scopes ?? [])
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
  }
  await keys.createKey(key)
  return { key_id: key.key_id, key: token.token, dataset_id: dataset.id, dataset_name: dataset.name, scopes }
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
