/**
 * API key tokens (docs/api.md#authentication-and-scopes). A token is `ocl_<key_id>_<secret>`: the key id finds the
 * stored key, and only the SHA-256 of the secret is stored (the secret has 256 random bits, so a
 * fast hash is enough). The token is shown once, at creation.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto'
import { sha256Hex } from './sha256.js'

const TOKEN = /^ocl_([a-z0-9]{16})_([A-Za-z0-9_-]{43})$/

export interface NewKeyToken {
  keyId: string
  /** The whole token the client sends; never stored. */
  token: string
  secretHash: string
}

/** The stored form of a key's secret: sha256 of its UTF-8 text, 64 lowercase hex characters. */
export function hashSecret(secret: string): string {
  return sha256Hex(secret)
}

/** A fresh key id and secret. */
export function newKeyToken(): NewKeyToken {
  const keyId = randomBytes(10).toString('hex').slice(0, 16)
  const secret = randomBytes(32).toString('base64url')
  return { keyId, token: `ocl_${keyId}_${secret}`, secretHash: hashSecret(secret) }
}

/** Splits a token into key id and secret; null when it is not shaped like an Ocelog key. */
export function parseToken(token: string): { keyId: string; secret: string } | null {
  const m = TOKEN.exec(token)
  if (m === null || m[1] === undefined || m[2] === undefined) return null
  return { keyId: m[1], secret: m[2] }
}

/** Constant-time comparison of a presented secret with a stored hash. */
export function secretMatches(secret: string, storedHash: string): boolean {
  const a = Buffer.from(hashSecret(secret), 'hex')
  const b = Buffer.from(storedHash, 'hex')
  return a.length === b.length && timingSafeEqual(a, b)
}

/** A new dataset id: 12 lowercase characters, so the stream name stays short (`dataset-<id>`). */
export function newDatasetId(): string {
  return randomBytes(9)
    .toString('base64url')
    .toLowerCase()
    .replace(/[^a-z0-9]/g, 'x')
    .slice(0, 12)
}

export const DATASET_ID = /^[a-z0-9][a-z0-9-]{0,62}$/
