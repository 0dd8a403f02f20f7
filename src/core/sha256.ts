/** SHA-256 over UTF-8 text (FIPS 180-4), as lowercase hex. No I/O. */
import * as crypto from 'node:crypto'

/**
 * sha256 (64 lowercase hex characters) of UTF-8 `text`: Node's one-shot `crypto.hash` where it
 * exists (Node ≥ 20.12; no Hash object per call), else a Hash object. Both give the same digest.
 */
export const sha256Hex: (text: string) => string =
  typeof crypto.hash === 'function' ? (text) => crypto.hash('sha256', text, 'hex') : (text) => crypto.createHash('sha256').update(text).digest('hex')
