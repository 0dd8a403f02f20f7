/**
 * The page's session with the service: the API key, kept in this tab's sessionStorage only and sent
 * as a Bearer header to this server only, and JSON reads of `/v1/process/*` (docs/api.md). A read
 * that was started with a key that has since been forgotten or replaced fails with `Stale`, so that
 * a late answer never draws the previous dataset on the page.
 */
import type { Problem } from '../src/schemas/api.js'

const KEY_STORAGE = 'ocelog.apiKey'

/** A failed request, with the problem's detail when the server sent one. */
export class RequestFailed extends Error {
  constructor(
    readonly status: number,
    detail: string,
  ) {
    super(detail)
  }
}

/** An answer to a request made with a key that is no longer the page's: to be dropped. */
export class Stale extends Error {}

let apiKey: string | null = sessionStorage.getItem(KEY_STORAGE)

/** Whether the page holds a key. */
export function hasKey(): boolean {
  return apiKey !== null
}

/** Keeps `key` for this tab (sessionStorage), or forgets the key when null. */
export function setKey(key: string | null): void {
  apiKey = key
  if (key === null) sessionStorage.removeItem(KEY_STORAGE)
  else sessionStorage.setItem(KEY_STORAGE, key)
}

function isProblem(value: unknown): value is Problem {
  return typeof value === 'object' && value !== null && 'detail' in value && typeof value.detail === 'string'
}

/**
 * GETs `path` (with its query) with the key as a Bearer header and answers its JSON body.
 * @throws RequestFailed with the status and the problem's detail; Stale when the key changed meanwhile.
 */
export async function getJson<T>(path: string): Promise<T> {
  const key = apiKey
  if (key === null) throw new RequestFailed(401, 'no API key')
  const res = await fetch(path, { headers: { authorization: `Bearer ${key}`, accept: 'application/json' } })
  const body: unknown = await res.json().catch(() => null)
  if (apiKey !== key) throw new Stale('the key changed')
  if (!res.ok) throw new RequestFailed(res.status, isProblem(body) ? body.detail : `${path} answered ${String(res.status)}`)
  return body as T
}
