/**
 * Contract of the ObjectClaims port (src/ports/object-claims.ts): the same cases for every adapter.
 * Written for engines shared across runs: every case uses fresh dataset and object ids.
 */
import { randomUUID } from 'node:crypto'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { ObjectClaims } from '../../src/ports/object-claims.js'
import { freshDatasetId } from './fixtures.js'

export interface ObjectClaimsHarness {
  claims: ObjectClaims
  close(): Promise<void>
}

/** Runs the ObjectClaims contract against the adapter `open` builds (one fresh harness per case). */
export function objectClaimsContract(adapter: string, open: () => Promise<ObjectClaimsHarness>): void {
  describe(`ObjectClaims contract: ${adapter}`, () => {
    let h: ObjectClaimsHarness
    let claims: ObjectClaims
    beforeEach(async () => {
      h = await open()
      claims = h.claims
    })
    afterEach(async () => {
      await h.close()
    })

    it('claims object ids: the first claim wins, a later one gets only the ids nobody claimed', async () => {
      const ds = freshDatasetId()
      const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()]
      expect([...(await claims.claim(ds, [a, b]))].sort()).toEqual([a, b].sort())
      expect([...(await claims.claim(ds, [b, c]))]).toEqual([c])
      expect([...(await claims.claim(ds, []))]).toEqual([])
    })

    it('claims an id named twice in one call once', async () => {
      const id = randomUUID()
      expect([...(await claims.claim(freshDatasetId(), [id, id]))]).toEqual([id])
    })

    it('claims each id exactly once among concurrent callers (unique object id)', async () => {
      const ds = freshDatasetId()
      const ids = Array.from({ length: 20 }, () => randomUUID())
      const results = await Promise.all(Array.from({ length: 6 }, (_, i) => claims.claim(ds, i % 2 === 0 ? ids : [...ids].reverse())))
      const claimed = results.flatMap((s) => [...s])
      expect(claimed.sort()).toEqual([...ids].sort())
    })
  })
}
