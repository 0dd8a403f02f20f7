/**
 * The service's V8 heap ceiling (SERVICE_HEAP_MB, src/app/runtime.ts) reaches the API
 * thread only through node's flags, and glibc's arena cap (SERVICE_ENV) only through the
 * environment the process starts with, so every command that starts the service passes the same
 * ones: `npm start` and docker-compose.yml (the bench imports SERVICE_NODE_FLAGS and SERVICE_ENV itself); the
 * image (Dockerfile) carries SERVICE_ENV too, for `docker run` without compose.
 */
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { SERVICE_ENV, SERVICE_NODE_FLAGS } from '../../src/app/runtime.js'
import { requireBuild } from '../helpers/cli.js'

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8')

describe('the service heap ceiling', () => {
  it('is passed by npm start, with the environment', () => {
    const pkg = JSON.parse(read('package.json')) as { scripts: Record<string, string> }
    const env = Object.entries(SERVICE_ENV).map(([name, value]) => `${name}=${value}`)
    expect(pkg.scripts.start).toBe(
      `(node scripts/build-stamp.mjs check || npm run build --silent) && ${env.join(' ')} exec node ${SERVICE_NODE_FLAGS.join(' ')} dist/src/cli/main.js serve`,
    )
  })

  it('reaches the projector worker from the flag the process was started with', () => {
    requireBuild()
    const module = new URL('../../dist/src/projector/embedded.js', import.meta.url).href
    const script = `import('${module}').then((m) => console.log(JSON.stringify([m.workerHeapMb(), require('node:v8').getHeapStatistics().heap_size_limit])))`
    const [worker, limit] = JSON.parse(execFileSync(process.execPath, ['--max-old-space-size=512', '-e', script], { encoding: 'utf8' })) as [number, number]
    expect(worker).toBe(Math.round(limit / 2 ** 20))
    // The limit the flag set (old generation 512 MiB plus the young generation), not V8's default of several GiB.
    expect(worker).toBeGreaterThanOrEqual(512)
    expect(worker).toBeLessThan(700)
  })

  it('is passed to every Ocelog service of docker-compose.yml', () => {
    const options = [...read('docker-compose.yml').matchAll(/^\s+NODE_OPTIONS:\s*"([^"]*)"\s*$/gm)].map((m) => m[1])
    expect(options).toEqual([SERVICE_NODE_FLAGS.join(' ')])
    expect(read('docker-compose.yml')).toMatch(/x-ocelog-environment: &ocelog-environment\n(?: {2}.*\n)* {2}NODE_OPTIONS:/)
  })

  it('has the environment in the image, for `docker run` without docker-compose.yml', () => {
    const runtime =
      read('Dockerfile')
        .split(/^FROM /m)
        .at(-1) ?? ''
    for (const [name, value] of Object.entries(SERVICE_ENV)) {
      expect([...runtime.matchAll(new RegExp(`^ENV ${name}=(\\S+)$`, 'gm'))].map((m) => m[1])).toEqual([value])
    }
  })

  it('has the environment in every Ocelog service of docker-compose.yml', () => {
    const compose = read('docker-compose.yml')
    for (const [name, value] of Object.entries(SERVICE_ENV)) {
      expect([...compose.matchAll(new RegExp(`^\\s+${name}:\\s*"([^"]*)"\\s*$`, 'gm'))].map((m) => m[1])).toEqual([value])
      expect(compose).toMatch(new RegExp(`x-ocelog-environment: &ocelog-environment\\n(?: {2}.*\\n)* {2}${name}:`))
    }
  })
})
