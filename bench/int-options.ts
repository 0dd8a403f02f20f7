/**
 * Whole-number parsers for the benches' command-line options (commander's argument parsers): each
 * returns the number or throws commander's InvalidArgumentError, which it prints with the option.
 */
import { InvalidArgumentError } from 'commander'

/** A whole number ≥ 0 (0 leaves a row or a step out). */
export function wholeInt(v: string): number {
  const n = Number(v)
  if (!Number.isSafeInteger(n) || n < 0) throw new InvalidArgumentError('must be a whole number ≥ 0')
  return n
}

/** A whole number ≥ 1. */
export function positiveInt(v: string): number {
  const n = Number(v)
  if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError('must be a whole number ≥ 1')
  return n
}

/** Any whole number (a seed). */
export function anyInt(v: string): number {
  const n = Number(v)
  if (!Number.isSafeInteger(n)) throw new InvalidArgumentError('must be a whole number')
  return n
}
