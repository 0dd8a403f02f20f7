import type { AddressInfo } from 'node:net'

/**
 * The address the service's socket is bound to, as the URL its start line names (README § Quick
 * start): `http://0.0.0.0:8080` under the default HOST (every IPv4 interface), `http://[::]:8080`
 * for `::`, `http://127.0.0.1:8080` for loopback only. Fastify's own lines before it list the
 * addresses of the interfaces this reaches.
 * @param address what `server.address()` answers once listening: an AddressInfo for TCP (a pipe's
 *   path, or null before listening, are not TCP and give `fallback`).
 * @param fallback the URL to name when `address` is not TCP (Fastify's answer from `listen`).
 */
export function listenUrl(address: AddressInfo | string | null, fallback: string): string {
  if (address === null || typeof address === 'string') return fallback
  const host = address.family === 'IPv6' || address.address.includes(':') ? `[${address.address}]` : address.address
  return `http://${host}:${String(address.port)}`
}
