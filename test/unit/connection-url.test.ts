import { describe, expect, it } from 'vitest'
import { redactUrl } from '../../src/core/connection-url.js'

describe('redactUrl', () => {
  it('hides the user and password of a connection URL', () => {
    expect(redactUrl('mongodb://u:secret@127.0.0.1:27017/ocelog?directConnection=true')).toBe('mongodb://***@127.0.0.1:27017/ocelog?directConnection=true')
    expect(redactUrl('esdb://admin:changeit@eventstore:2113?tls=false')).toBe('esdb://***@eventstore:2113?tls=false')
    expect(redactUrl('redis://:pw@redis:6379/0')).toBe('redis://***@redis:6379/0')
  })

  it('leaves a URL without credentials, and an @ past the host, as they are', () => {
    expect(redactUrl('esdb://127.0.0.1:2113?tls=false')).toBe('esdb://127.0.0.1:2113?tls=false')
    expect(redactUrl('mongodb://db:27017/ocelog?appName=a@b')).toBe('mongodb://db:27017/ocelog?appName=a@b')
  })

  it('does not throw on a string that is no URL', () => {
    expect(redactUrl('esdb://')).toBe('esdb://')
    expect(redactUrl('')).toBe('')
  })
})
