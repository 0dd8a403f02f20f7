/**
 * docker-compose.yml and the contract suites' containers use the same pinned engine images
 * (test/helpers/engines.ts), so the suites test what `docker compose up` runs; the profile
 * `postgres` pins its server as the tests' harness runs it (PostgreSQL 15).
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

  it('runs PostgreSQL 15, pinned, in the profile postgres with two API replicas and two projector processes on it', () => {
    expect(images).toContain('postgres:15.10-bookworm')
    const profiled = [...compose.matchAll(/^ {2}([a-z0-9-]+):\n {4}profiles: \["postgres"\]$/gm)].map((m) => m[1])
    expect(profiled).toEqual(['postgres', 'api-pg-1', 'api-pg-2', 'projector-pg-1', 'projector-pg-2'])
    expect(compose).toContain('POSTGRES_URL: "postgres://ocelog:ocelog@postgres:5432/ocelog"')
  })

  it('pins every engine image to an exact version tag', () => {
    const engines = images.filter((i) => i !== undefined && !i.startsWith('ocelog:'))
    expect(engines).toHaveLength(4)
    // An exact release: major.minor.patch, or PostgreSQL's major.minor (its releases have two parts since 10).
    for (const image of engines) expect(image).toMatch(image?.startsWith('postgres:') === true ? /:\d+\.\d+-[a-z]+$/ : /:\d+\.\d+\.\d+(-[a-z-]+)?$/)
  })
})
