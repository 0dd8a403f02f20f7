/** The address the service's start line names (src/app/listen-url.ts, README § Quick start). */
import { describe, expect, it } from 'vitest'
import { listenUrl } from '../../src/app/listen-url.js'

describe('listenUrl', () => {
  it('names the bound IPv4 address and port, 0.0.0.0 included', () => {
    expect(listenUrl({ address: '0.0.0.0', family: 'IPv4', port: 8080 }, 'http://127.0.0.1:8080')).toBe('http://0.0.0.0:8080')
    expect(listenUrl({ address: '127.0.0.1', family: 'IPv4', port: 41234 }, 'x')).toBe('http://127.0.0.1:41234')
  })

  it('brackets an IPv6 address', () => {
    expect(listenUrl({ address: '::', family: 'IPv6', port: 8080 }, 'x')).toBe('http://[::]:8080')
    expect(listenUrl({ address: '::1', family: 'IPv6', port: 9000 }, 'x')).toBe('http://[::1]:9000')
  })

  it('falls back to the given URL for a pipe or no address', () => {
    expect(listenUrl('/tmp/ocelog.sock', 'http://localhost')).toBe('http://localhost')
    expect(listenUrl(null, 'http://127.0.0.1:8080')).toBe('http://127.0.0.1:8080')
  })
})
