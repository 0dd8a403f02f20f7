/**
 * The read side of declared types (docs/read-models.md#declared_types), shared by every query
 * adapter: rows of the read model grouped into the answer. Pure.
 */
import type { AttributeType } from '../schemas/api.js'
import type { DeclaredType, DeclaredTypes } from '../schemas/read-models.js'

const ATTRIBUTE_TYPES: ReadonlySet<string> = new Set<AttributeType>(['string', 'time', 'integer', 'float', 'boolean'])

/** A stored attribute type as OCEL 2.0's: the stored text when it is one (it always is: the API accepts no other), else `string`. */
export function attributeTypeOf(text: string): AttributeType {
  return ATTRIBUTE_TYPES.has(text) ? (text as AttributeType) : 'string'
}

/**
 * Groups the read model's rows into DeclaredTypes: `types` and `attributes` each sorted (by kind,
 * name; by kind, type name, name), kind `event` or `object`. Attribute rows of a type without a
 * row are left out.
 */
export function groupDeclaredTypes(
  types: readonly { kind: string; name: string }[],
  attributes: readonly { kind: string; type_name: string; name: string; type: string }[],
): DeclaredTypes {
  const out: DeclaredTypes = { event_types: [], object_types: [] }
  const byKey = new Map<string, DeclaredType>()
  for (const t of types) {
    const declared: DeclaredType = { name: t.name, attributes: [] }
    byKey.set(JSON.stringify([t.kind, t.name]), declared)
    if (t.kind === 'event') out.event_types.push(declared)
    else out.object_types.push(declared)
  }
  for (const a of attributes) byKey.get(JSON.stringify([a.kind, a.type_name]))?.attributes.push({ name: a.name, type: attributeTypeOf(a.type) })
  return out
}
