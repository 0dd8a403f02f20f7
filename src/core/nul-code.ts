/**
 * A code for text that must not hold U+0000 (docs/read-models.md#control-characters-on-postgresql):
 *
 *   U+0000 → U+0001 U+0001,   U+0001 → U+0001 U+0002,   any other character as it is.
 *
 * The coded text holds no U+0000, so U+0000 can separate coded parts (src/core/keys.ts) and
 * PostgreSQL's `text` can hold it (src/adapters/postgres/text-codec.ts). The code is prefix-free and
 * keeps the order of the characters it writes (U+0000 < U+0001 < any other, and so are their codes),
 * so coded text compared by its bytes orders as the plain text does, and equal texts stay equal. A
 * text without U+0000 or U+0001, nearly every one, is its own code.
 */

const NUL = '\u0000'
const SOH = '\u0001'

/** A text holding U+0000 or U+0001: the only ones the code changes. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: these control characters are what it codes
export const NEEDS_NUL_CODE = /[\u0000\u0001]/

/** A coded pair: U+0001 U+0001 (U+0000) or U+0001 U+0002 (U+0001). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: these control characters are the code
const CODED = /\u0001[\u0001\u0002]/g

/** `text` in the code. */
export function encodeNul(text: string): string {
  if (!NEEDS_NUL_CODE.test(text)) return text
  let out = ''
  for (const c of text) out += c === NUL ? '\u0001\u0001' : c === SOH ? '\u0001\u0002' : c
  return out
}

/**
 * A coded text back as it was: the inverse of encodeNul.
 * @throws never: a lone U+0001 (not written by encodeNul) is kept as it is.
 */
export function decodeNul(coded: string): string {
  if (!coded.includes(SOH)) return coded
  return coded.replace(CODED, (pair) => (pair === '\u0001\u0001' ? NUL : SOH))
}
