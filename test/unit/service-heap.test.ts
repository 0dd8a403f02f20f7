/**
 * The service's V8 heap ceiling (SERVICE_HEAP_MB, src/embedded-projector.ts) reaches the API
 * thread only through node's flags, so every command that starts the service passes the same
 * ones: `npm start` and docker-compose.yml (the bench imports SERVICE_NODE_FLAGS itself).
 */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { SERVICE_HEAP_MB, SERVICE_NODE_FLAGS } from '../../src/embedded-projector.js'

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8')

describe('the service heap ceiling', () => {
  it('is one flag of 1 GiB', () => {
    expect([SERVICE_HEAP_MB, SERVICE_NODE_FLAGS]).toEqual([1024, ['--max-old-space-size=1024']])
  })

  it('is passed by npm start', () => {
    const pkg = JSON.parse(read('package.json')) as { scripts: Record<string, string> }
    expect(pkg.scripts.start).toBe(`npm run build --silent && node ${SERVICE_NODE_FLAGS.join(' ')} dist/src/cli/main.js serve`)
  })

  it('is passed to every Ocelog service of docker-compose.yml', () => {
    const options = [...read('docker-compose.yml').matchAll(/^\s+NODE_OPTIONS:\s*"([^"]*)"\s*$/gm)].map((m) => m[1])
    expect(options).toEqual([SERVICE_NODE_FLAGS.join(' ')])
    expect(read('docker-compose.yml')).toMatch(/x-ocelog-environment: &ocelog-environment\n(?: {2}.*\n)* {2}NODE_OPTIONS:/)
  })
})
