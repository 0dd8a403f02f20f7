/**
 * The OCEL 2.0 JSON layout (https://www.ocel-standard.org/, JSON serialisation) as TypeBox schemas,
 * the single source of the OCEL JSON types for `ocelog export` (writer) and `ocelog import` (reader).
 *
 * Three variants of one layout:
 * - `OcelJson`: the standard as published in pm4py's `schema_ocel2.json` (draft-07): attribute values
 *   are strings, times are RFC 3339 date-times, events need only id/type/time and objects only id/type,
 *   and unknown fields are allowed.
 * - `OcelJsonStrict`: what Ocelog writes. Every array is present, attribute types are one of the five
 *   OCEL type names, and there are no other fields. A strict document is also a valid `OcelJson`.
 * - `OcelJsonTolerant`: for reading real files. Attribute values may be JSON numbers, booleans or null
 *   (logs converted from OCEL SQLite carry typed values), and times are any string (some logs carry
 *   time-zone-naive timestamps; the reader decides how to interpret them).
 */
import { Type, type Static, type TSchema } from 'typebox'

/** The attribute type names of OCEL 2.0. */
export const OcelAttributeType = Type.Union([
  Type.Literal('string'),
  Type.Literal('integer'),
  Type.Literal('float'),
  Type.Literal('boolean'),
  Type.Literal('time'),
])
export type OcelAttributeType = Static<typeof OcelAttributeType>

const DateTime = Type.String({ format: 'date-time' })

type ObjectOptions = { additionalProperties?: boolean }

/** The leaves of the layout, given the schema of an attribute value, of a time and of an attribute type name. */
function leaves<Value extends TSchema, Time extends TSchema, TypeName extends TSchema>(value: Value, time: Time, typeName: TypeName, options: ObjectOptions) {
  const AttributeDeclaration = Type.Object({ name: Type.String(), type: typeName }, options)
  return {
    /** One element of `eventTypes` / `objectTypes`. */
    TypeDeclaration: Type.Object({ name: Type.String(), attributes: Type.Array(AttributeDeclaration) }, options),
    /** E2O (in an event) or O2O (in an object). `qualifier` is required; '' is the empty qualifier. */
    Relationship: Type.Object({ objectId: Type.String(), qualifier: Type.String() }, options),
    EventAttribute: Type.Object({ name: Type.String(), value }, options),
    /** One entry of an object's attribute history: `value` holds from `time` on. */
    ObjectAttribute: Type.Object({ name: Type.String(), time, value }, options),
    time,
  }
}

/** The standard's events and objects: only id/type(/time) are required. */
function optionalArrays<Time extends TSchema, EventAttribute extends TSchema, ObjectAttribute extends TSchema, Relationship extends TSchema>(l: {
  time: Time
  EventAttribute: EventAttribute
  ObjectAttribute: ObjectAttribute
  Relationship: Relationship
}) {
  return {
    Event: Type.Object({
      id: Type.String(),
      type: Type.String(),
      time: l.time,
      attributes: Type.Optional(Type.Array(l.EventAttribute)),
      relationships: Type.Optional(Type.Array(l.Relationship)),
    }),
    Object: Type.Object({
      id: Type.String(),
      type: Type.String(),
      attributes: Type.Optional(Type.Array(l.ObjectAttribute)),
      relationships: Type.Optional(Type.Array(l.Relationship)),
    }),
  }
}

function document<Decl extends TSchema, Ev extends TSchema, Ob extends TSchema>(typeDeclaration: Decl, event: Ev, object: Ob, options: ObjectOptions = {}) {
  return Type.Object(
    {
      eventTypes: Type.Array(typeDeclaration),
      objectTypes: Type.Array(typeDeclaration),
      events: Type.Array(event),
      objects: Type.Array(object),
    },
    options,
  )
}

const standard = leaves(Type.String(), DateTime, Type.String(), {})
const standardItems = optionalArrays(standard)

/** The OCEL 2.0 JSON document as the standard's JSON schema describes it (pm4py `schema_ocel2.json`). */
export const OcelJson = document(standard.TypeDeclaration, standardItems.Event, standardItems.Object)
export type OcelJson = Static<typeof OcelJson>

const closed = { additionalProperties: false }
const strict = leaves(Type.String(), DateTime, OcelAttributeType, closed)

/** One element of `eventTypes` / `objectTypes` as Ocelog writes it. */
export const OcelTypeDeclarationStrict = strict.TypeDeclaration
export type OcelTypeDeclarationStrict = Static<typeof OcelTypeDeclarationStrict>

/** One event as Ocelog writes it. */
export const OcelEventStrict = Type.Object(
  {
    id: Type.String(),
    type: Type.String(),
    time: DateTime,
    attributes: Type.Array(strict.EventAttribute),
    relationships: Type.Array(strict.Relationship),
  },
  closed,
)
export type OcelEventStrict = Static<typeof OcelEventStrict>

/** One object as Ocelog writes it. */
export const OcelObjectStrict = Type.Object(
  {
    id: Type.String(),
    type: Type.String(),
    attributes: Type.Array(strict.ObjectAttribute),
    relationships: Type.Array(strict.Relationship),
  },
  closed,
)
export type OcelObjectStrict = Static<typeof OcelObjectStrict>

/** What `ocelog export` writes: a valid `OcelJson` with every array present and nothing else. */
export const OcelJsonStrict = document(strict.TypeDeclaration, OcelEventStrict, OcelObjectStrict, closed)
export type OcelJsonStrict = Static<typeof OcelJsonStrict>

const tolerant = leaves(Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]), Type.String(), Type.String(), {})
const tolerantItems = optionalArrays(tolerant)

/** An OCEL 2.0 JSON document as found in the wild: typed attribute values and any time strings. */
export const OcelJsonTolerant = document(tolerant.TypeDeclaration, tolerantItems.Event, tolerantItems.Object)
export type OcelJsonTolerant = Static<typeof OcelJsonTolerant>
