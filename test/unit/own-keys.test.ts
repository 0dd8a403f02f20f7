import { describe, expect, it } from 'vitest'
import { hasNoOwnKeys, ownKeyCount } from '../../src/core/own-keys.js'

describe('own keys', () => {
  it('counts what Object.keys counts: own enumerable keys, not inherited or hidden ones', () => {
    const parsed = JSON.parse('{"a":1,"b":{"c":2},"__proto__":3}') as object
    const child: object = Object.create({ inherited: 1 }, { own: { value: 1, enumerable: true }, hidden: { value: 2, enumerable: false } })
    for (const v of [parsed, child, {}, [], [1, 2], { x: undefined }]) expect(ownKeyCount(v)).toBe(Object.keys(v).length)
    expect(ownKeyCount(parsed)).toBe(3)
    expect(ownKeyCount(child)).toBe(1)
  })

  it('sees an object with no own enumerable key as empty', () => {
    expect(hasNoOwnKeys({})).toBe(true)
    expect(hasNoOwnKeys(Object.create({ inherited: 1 }) as object)).toBe(true)
    expect(hasNoOwnKeys({ a: undefined })).toBe(false)
    expect(hasNoOwnKeys(JSON.parse('{"k":null}') as object)).toBe(false)
  })
})
