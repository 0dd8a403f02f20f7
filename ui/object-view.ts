/**
 * The object view (`#object/<type>/<id>`): one object from `GET /v1/process/objects/{type}/{id}`,
 * with its attributes, its trace (its events in (timestamp, position) order with its qualifiers)
 * and the objects it shares events with, each linking to its own view.
 */
import type { ObjectResponse } from '../src/schemas/process.js'
import { el, objectLink, table } from './dom.js'
import { formatCount } from './dot.js'

const time = (iso: string | null): string => (iso === null ? '—' : iso.replace('T', ' ').slice(0, 19))

/** The object's heading, attributes, trace and related objects. */
export function objectPanel(o: ObjectResponse): HTMLElement {
  const attributes = Object.entries(o.object.attributes)
  return el(
    'div',
    'object-view',
    el('h2', '', `${o.object.type} `, el('code', '', o.object.id)),
    el('p', 'muted', attributes.length === 0 ? 'No attributes.' : attributes.map(([k, v]) => `${k} = ${JSON.stringify(v)}`).join(' · ')),
    el('h3', '', `Trace: ${formatCount(o.trace.length)}${o.trace_truncated ? '+' : ''} events`),
    el(
      'div',
      'trace',
      table(
        ['Time (UTC)', 'End', 'Activity', 'Qualifiers'],
        o.trace.map((e) => [time(e.timestamp), time(e.end_timestamp), e.event_type, e.qualifiers.join(', ')]),
      ),
    ),
    el('h3', '', `Related objects: ${formatCount(o.related.length)}${o.related_truncated ? '+' : ''}`),
    el(
      'div',
      'related',
      table(
        ['Object', 'Shared events'],
        o.related.map((r) => [objectLink(r.type, r.id), formatCount(r.shared_events)]),
        [1],
      ),
    ),
  )
}
