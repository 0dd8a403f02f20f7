/**
 * The object view (`#object/<type>/<id>`): one object from `GET /v1/process/objects/{type}/{id}`,
 * with its attributes, its trace (its events in (timestamp, position) order with its qualifiers)
 * the objects it shares events with, and its O2O relationships both ways: to the objects it names
 * (`relationships`) and from the objects that name it (`incoming_relationships`), each with its
 * qualifier and since when it holds (README § O2O relationships and attribute times). Every other
 * object links to its own view.
 */
import type { ObjectRelationship, ObjectResponse } from '../src/schemas/process.js'
import { el, objectLink, table } from './dom.js'
import { formatCount } from './dot.js'

const time = (iso: string | null): string => (iso === null ? '—' : iso.replace('T', ' ').slice(0, 19))

/** A table of O2O relationships (the other object, the qualifier, since when), or a line saying there is none. */
function relationshipTable(rows: ObjectRelationship[], none: string): HTMLElement {
  if (rows.length === 0) return el('p', 'muted', none)
  return table(
    ['Object', 'Qualifier', 'Since (UTC)'],
    rows.map((r) => [objectLink(r.type, r.id), r.qualifier ?? '—', time(r.time)]),
  )
}

/** The object's heading, attributes, O2O relationships both ways, trace and related objects. */
export function objectPanel(o: ObjectResponse): HTMLElement {
  const attributes = Object.entries(o.object.attributes)
  return el(
    'div',
    'object-view',
    el('h2', '', `${o.object.type} `, el('code', '', o.object.id)),
    el('p', 'muted', attributes.length === 0 ? 'No attributes.' : attributes.map(([k, v]) => `${k} = ${JSON.stringify(v)}`).join(' · ')),
    el('h3', '', `Relationships to other objects (O2O): ${formatCount(o.relationships.length)}${o.relationships_truncated ? '+' : ''}`),
    el('div', 'o2o-out', relationshipTable(o.relationships, 'This object names no other object.')),
    el('h3', '', `Relationships from other objects (O2O): ${formatCount(o.incoming_relationships.length)}${o.incoming_relationships_truncated ? '+' : ''}`),
    el('div', 'o2o-in', relationshipTable(o.incoming_relationships, 'No other object names this one.')),
    el('h3', '', `Trace: ${formatCount(o.trace.length)}${o.trace_truncated ? '+' : ''} ${o.trace.length === 1 && !o.trace_truncated ? 'event' : 'events'}`),
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
