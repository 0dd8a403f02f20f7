import { describe, expect, it } from 'vitest'
import { problemForError, problemForOcelogError } from '../../src/api/problem.js'
import { cliMessage } from '../../src/cli/text.js'
import {
  AdminError,
  AppendTooLargeError,
  CheckpointConflictError,
  CliError,
  ConfigError,
  DatasetExistsError,
  EngineUnavailableError,
  InvalidParameterError,
  isOcelogError,
  LogUnavailableError,
  NotFoundError,
  type OcelogError,
  OcelReadError,
  ProjectionStoppedError,
} from '../../src/core/errors.js'

const stop = new ProjectionStoppedError({
  projection: 'read-models-1-of-2',
  position: 42,
  stream: 'dataset-ds1',
  cause: 'poisoned',
  attempts: 5,
  stopped_at: '2026-01-01T00:00:00.000Z',
})

/** One error of every kind, with the status each must answer. */
const EVERY_KIND: [OcelogError, number][] = [
  [new InvalidParameterError('from', 'ISO 8601 date-time with Z or an offset'), 422],
  [new NotFoundError('no object order/o-1'), 404],
  [new LogUnavailableError('disk gone'), 503],
  [new EngineUnavailableError('MongoDB at MONGODB_URL did not answer'), 503],
  [new CheckpointConflictError('read-models', 1, 2), 503],
  [new DatasetExistsError('dataset ds1 exists'), 409],
  [new ConfigError('PORT=x: must be a whole number'), 500],
  [new AdminError('no dataset ds9'), 422],
  [new CliError('--shard 3/2: out of range'), 422],
  [new OcelReadError('not JSON'), 422],
  [new AppendTooLargeError('item 0 is 2 MiB'), 413],
  [stop, 503],
]

describe('the error union', () => {
  it('tells Ocelog’s errors from others', () => {
    expect(EVERY_KIND.map(([e]) => isOcelogError(e))).toEqual(EVERY_KIND.map(() => true))
    expect([isOcelogError(new Error('x')), isOcelogError('text'), isOcelogError(null)]).toEqual([false, false, false])
  })

  it('has one distinct kind per class', () => {
    expect(new Set(EVERY_KIND.map(([e]) => e.kind)).size).toBe(EVERY_KIND.length)
  })
})

describe('problemForOcelogError', () => {
  it('answers every kind with its status and a problem type URN', () => {
    expect(EVERY_KIND.map(([e]) => problemForOcelogError(e).body.status)).toEqual(EVERY_KIND.map(([, status]) => status))
    for (const [e] of EVERY_KIND) expect(problemForOcelogError(e).body.type).toMatch(/^urn:ocelog:problem:[a-z-]+$/)
  })

  it('names the parameter and its rule for an invalid parameter (422)', () => {
    expect(problemForOcelogError(new InvalidParameterError('cursor', 'a cursor from an earlier answer')).body).toEqual({
      type: 'urn:ocelog:problem:validation-failed',
      title: 'Validation failed',
      status: 422,
      detail: 'cursor: a cursor from an earlier answer',
      errors: [{ path: 'cursor', message: 'a cursor from an earlier answer' }],
    })
  })

  it('asks for a retry after 1 s when the log is unavailable, and only for 503s', () => {
    expect(problemForOcelogError(new LogUnavailableError('x')).retryAfterSeconds).toBe(1)
    expect(EVERY_KIND.filter(([e]) => problemForOcelogError(e).retryAfterSeconds !== undefined).map(([, s]) => s)).toEqual([503, 503, 503, 503])
  })
})

describe('problemForError', () => {
  it('keeps a 4xx of a foreign error and hides anything else behind 500', () => {
    expect(problemForError(Object.assign(new Error('Method not allowed'), { statusCode: 405 })).body.status).toBe(405)
    const internal = problemForError(new TypeError('secret internals'))
    expect([internal.body.status, internal.body.detail.includes('secret')]).toEqual([500, false])
  })
})

describe('cliMessage', () => {
  it('keeps the message of usage and configuration errors as it is', () => {
    expect(cliMessage(new CliError('--shard 3/2: out of range'))).toBe('--shard 3/2: out of range')
    expect(cliMessage(new ConfigError('PORT=x: bad'))).toBe('PORT=x: bad')
  })

  it('names the projection, the record’s position and stream, and the cause of a stop', () => {
    expect(cliMessage(stop)).toBe(
      'projection read-models-1-of-2 stopped at the record at position 42 of stream dataset-ds1 after 5 attempt(s): poisoned. ' +
        'Fix the cause, then start the projector again: it retries that record',
    )
  })

  it('says that nothing was recorded when the log is unavailable', () => {
    expect(cliMessage(new LogUnavailableError('disk gone'))).toBe(
      'the log is unavailable: disk gone; nothing of this command was recorded, retry when it answers',
    )
  })
})
