/**
 * A file written through a buffer of about 1 MiB: the bench's log generators (large-ocel.ts,
 * repeated-ocel.ts) write many small pieces of text without holding the whole file in memory.
 */
import { closeSync, openSync, writeSync } from 'node:fs'

export class BufferedFile {
  private readonly fd: number
  private buffer = ''
  /** Bytes written to the file so far (what `put` gave, once flushed). */
  bytes = 0

  /** Creates (or empties) the file at `path`. @throws Node's file errors. */
  constructor(path: string) {
    this.fd = openSync(path, 'w')
  }

  /** Appends `text`, writing the buffer out once it holds 1 MiB or more. */
  put(text: string): void {
    this.buffer += text
    if (this.buffer.length >= 1 << 20) this.flush()
  }

  private flush(): void {
    this.bytes += writeSync(this.fd, this.buffer)
    this.buffer = ''
  }

  /** Writes out what is buffered and closes the file. */
  close(): void {
    try {
      this.flush()
    } finally {
      closeSync(this.fd)
    }
  }
}
