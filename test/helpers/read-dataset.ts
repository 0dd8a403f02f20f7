/**
 * A small dataset with end timestamps for read-side e2e tests, sent through the built service's
 * HTTP API, and a wait until its projector has applied it.
 */
import { expect } from 'vitest'

/** Three orders and an item; order o1 carries run time on Create and Pay. */
export const READ_EVENTS = [
  {
    event: 'Create Order',
    timestamp: '2024-05-01T10:00:00Z',
    end_timestamp: '2024-05-01T10:10:00Z',
    objects: [
      { type: 'order', id: 'o1', properties: { amount: 120 } },
      { type: 'item', id: 'i1' },
    ],
  },
  { event: 'Pay Order', timestamp: '2024-05-01T11:00:00Z', end_timestamp: '2024-05-01T11:05:00Z', objects: [{ type: 'order', id: 'o1' }] },
  {
    event: 'Ship Order',
    timestamp: '2024-05-01T12:00:00Z',
    objects: [
      { type: 'order', id: 'o1' },
      { type: 'item', id: 'i1' },
    ],
  },
  { event: 'Create Order', timestamp: '2024-05-02T09:00:00Z', objects: [{ type: 'order', id: 'o2' }] },
  { event: 'Pay Order', timestamp: '2024-05-02T10:00:00Z', objects: [{ type: 'order', id: 'o2' }] },
  { event: 'Create Order', timestamp: '2024-05-03T09:00:00Z', objects: [{ type: 'order', id: 'o3' }] },
  { event: 'Cancel Order', timestamp: '2024-05-03T15:00:00Z', objects: [{ type: 'order', id: 'o3' }] },
]

/** Sends READ_EVENTS with `key` to the service at `url`, then waits until its read models hold them. */
export async function loadReadDataset(url: string, key: string): Promise<void> {
  const res = await fetch(`${url}/v1/event/batch`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ events: READ_EVENTS }),
  })
  expect(((await res.json()) as { processed: number }).processed).toBe(READ_EVENTS.length)
  await waitForEvents(url, key, READ_EVENTS.length)
}

/** Polls the summary until the dataset holds `count` events and every runner has applied its stream (`as_of` ≥ `log_position`; the projector runs in the service). */
export async function waitForEvents(url: string, key: string, count: number, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const res = await fetch(`${url}/v1/process/summary`, { headers: { authorization: `Bearer ${key}` } })
    const body = (await res.json()) as { events?: number; as_of?: number; log_position?: number | null }
    // Every runner has applied the dataset's stream (as_of is the lowest runner's position), not only the entities runner.
    if (body.events === count && (body.as_of ?? 0) >= (body.log_position ?? 0)) return
    if (Date.now() > deadline) throw new Error(`the read models hold ${String(body.events)} events, not ${String(count)}, after ${String(timeoutMs)} ms`)
    await new Promise((r) => setTimeout(r, 50))
  }
}
