/**
 * Staged close of a connection whose answer was sent before the request body arrived (RFC 9112
 * § 9.6, Tear-down): a server that closes at once while the client is still sending makes the
 * client's stack reset the connection, and a client that writes the whole body before reading
 * (Python's http.client, many SDKs) then sees EPIPE or ECONNRESET instead of the 413 or 401 it
 * was sent. So: half-close (send the answer and a FIN), keep reading and discarding what the
 * client still sends, and close when it has finished or after a time limit.
 */
import { Socket } from 'node:net'
import type { IncomingMessage } from 'node:http'

/** How long a connection may keep sending a body nobody reads after its answer, in ms (nginx's lingering_time is 30 s). */
export const LINGER_MS = 30_000

/**
 * Makes Node close the connection of `req` in stages when it closes it after an answer while the
 * body of `req` is still arriving; otherwise Node's own close runs unchanged. Call once per request
 * (keep-alive connections carry several). No effect on requests without a real socket (`inject`).
 */
export function closeInStagesIfBodyUnread(req: IncomingMessage, lingerMs = LINGER_MS): void {
  const socket = req.socket
  if (!(socket instanceof Socket)) return
  // Node's server calls destroySoon() after the last answer on a connection that closes
  // (`Connection: close`): end() then destroy() as soon as the answer is flushed, unread body or not.
  socket.destroySoon = function destroySoon(this: Socket) {
    if (req.complete) {
      Socket.prototype.destroySoon.call(this)
      return
    }
    this.end()
    const timer = setTimeout(() => this.destroy(), lingerMs)
    timer.unref()
    // The body is still being read (and dropped) by the server's parser; once the client has sent
    // everything and closed its side, nothing is left unread and the close resets nothing.
    this.once('end', () => this.destroy())
    this.once('close', () => clearTimeout(timer))
  }
}
