/**
 * docker-compose.yml and the contract suites' containers use the same pinned engine images
 * (test/helpers/engines.ts), so the suites test what `docker compose up` runs.
 */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { ENGINE_IMAGES } from '../helpers/engines.js'

const compose = readFileSync(new URL('../../docker-compose.yml', import.meta.url), 'utf8')
const images = [...compose.matchAll(/^\s+image:\s*(\S+)\s*$/gm)].map((m) => m[1])

describe('docker-compose.yml', () => {
  it('runs the engine images the contract suites pin', () => {
    expect(images).toEqual(expect.arrayContaining([ENGINE_IMAGES.eventstore, ENGINE_IMAGES.mongodb, ENGINE_IMAGES.redis]))
  })

  it('pins every engine image to an exact version tag', () => {
    const engines = images.filter((i) => i !== undefined && !i.startsWith('ocelog:'))
    expect(engines).toHaveLength(3)
    for (const image of engines) expect(image).toMatch(/:\d+\.\d+\.\d+(-[a-z-]+)?$/)
  })
})
