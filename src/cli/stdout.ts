/**
 * stdout of the command-line tools (`ocelog`, and the bench's own): what they do when the reader of
 * stdout leaves early, as in `ocelog replay --dataset ID | head`. No I/O beyond stdout and stderr.
 */
import type { Writable } from 'node:stream'

/** The status of a writer whose reader went away: 128 + SIGPIPE (13), what a shell reports for `seq 1e9 | head`. */
export const EXIT_STDOUT_CLOSED = 141

/**
 * Waits until everything written to `out` so far has been handed on (its queue flushed: for
 * stdout, a pipe's writes are queued), and tells whether it was delivered: false when `out` failed
 * with EPIPE (its reader left), so that what was written is cut and the command must not claim
 * success. Commands pass `process.stdout`.
 */
export async function delivered(out: Writable): Promise<boolean> {
  await new Promise<void>((resolve) => out.write('', () => resolve()))
  const error = out.errored as NodeJS.ErrnoException | null
  return error?.code !== 'EPIPE'
}

/**
 * Makes a closed stdout end the command quietly, as a Unix tool ends on SIGPIPE (Node ignores that
 * signal, so a write to a pipe whose reader left, as in `ocelog export | head`, raises EPIPE on
 * stdout instead): exit EXIT_STDOUT_CLOSED, with no stack trace. Any other stdout error fails the
 * command as `fail` (context.ts) does: a line on stderr, exit 1.
 */
export function exitWhenStdoutCloses(): void {
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(EXIT_STDOUT_CLOSED)
    process.stderr.write(`ocelog: cannot write to stdout: ${error.message}\n`)
    process.exit(1)
  })
}
