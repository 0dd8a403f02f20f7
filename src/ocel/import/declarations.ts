/**
 * The log's type declarations as POST /v1/types requests (docs/ocel.md#declared-types): every
 * declared event and object type, used or not, with its attributes, sent before the log's events
 * and objects so that the dataset keeps them (docs/read-models.md#declared_types). Pure but for
 * `sendDeclarations`, which sends what `declarationRequests` made.
 *
 * - A type declared twice in the log is sent once, its attributes merged (a repeated attribute takes
 *   the later type), as the service would merge two declarations.
 * - An attribute type that is not one of OCEL 2.0's five (string, time, integer, float, boolean) is
 *   sent as `string`, the type its values are read as (typedValue).
 * - Names the API refuses (empty, too long, a lone surrogate) are left out and counted: events and
 *   objects of such a type fail anyway.
 * - One request holds everything in the common case; a log past the request's limits is split
 *   (types at most LIMITS.declaredTypesMax per list, attributes at most LIMITS.attributesPerTypeMax
 *   per type: a type's attributes over several requests merge in the service).
 * - Each request's idempotency key is `ocel:<prefix>types:<sha256 of the request>`: a re-run records nothing twice.
 */
import { messageOf } from '../../core/errors.js'
import { fingerprintOf } from '../../core/idempotency.js'
import { LIMITS } from '../../core/limits.js'
import { hasLoneSurrogate } from '../../core/properties-check.js'
import type { AttributeDeclaration, AttributeType, TypesInput, TypesResponse } from '../../schemas/api.js'
import type { OcelTypeDeclaration } from './model.js'

const OCEL_TYPES: ReadonlySet<string> = new Set<AttributeType>(['string', 'time', 'integer', 'float', 'boolean'])

/** Bytes of JSON one request is cut at: well below the service's item limit (LIMITS.itemBytesMax). */
const REQUEST_BYTES = LIMITS.itemBytesMax / 2

/** What `declarationRequests` made of a log's declarations. */
export interface DeclarationPlan {
  /** The requests, in order; empty when the log declares nothing the API takes. */
  requests: TypesInput[]
  /** Distinct event and object types in the requests. */
  eventTypes: number
  objectTypes: number
  /** Declarations left out because the API refuses their name: `<kind> type "<name>"` or `<kind> type "<name>" attribute "<name>"`. */
  leftOut: string[]
}

function usable(name: string, max: number): boolean {
  const length = [...name].length
  return length >= 1 && length <= max && !hasLoneSurrogate(name)
}

/** The declarations of one kind merged by name (file order of first declaration), names the API refuses left out. */
function merged(declarations: readonly OcelTypeDeclaration[], kind: 'event' | 'object', leftOut: string[]): Map<string, Map<string, AttributeType>> {
  const nameMax = kind === 'event' ? LIMITS.eventNameMax : LIMITS.objectTypeMax
  const out = new Map<string, Map<string, AttributeType>>()
  for (const d of declarations) {
    if (!usable(d.name, nameMax)) {
      leftOut.push(`${kind} type ${JSON.stringify(d.name)}`)
      continue
    }
    const attributes = out.get(d.name) ?? new Map<string, AttributeType>()
    out.set(d.name, attributes)
    for (const a of d.attributes) {
      if (!usable(a.name, LIMITS.attributeNameMax)) {
        leftOut.push(`${kind} type ${JSON.stringify(d.name)} attribute ${JSON.stringify(a.name)}`)
        continue
      }
      // A repeated attribute takes the later type and keeps its first place.
      attributes.set(a.name, OCEL_TYPES.has(a.type) ? (a.type as AttributeType) : 'string')
    }
  }
  return out
}

/** One type's part of a request: its name and at most LIMITS.attributesPerTypeMax attributes. */
interface Part {
  kind: 'event' | 'object'
  name: string
  attributes: AttributeDeclaration[]
  bytes: number
}

function partsOf(kind: 'event' | 'object', types: Map<string, Map<string, AttributeType>>): Part[] {
  const parts: Part[] = []
  for (const [name, attributes] of types) {
    const all = [...attributes].map(([n, type]) => ({ name: n, type }))
    for (let i = 0; i === 0 || i < all.length; i += LIMITS.attributesPerTypeMax) {
      const slice = all.slice(i, i + LIMITS.attributesPerTypeMax)
      parts.push({ kind, name, attributes: slice, bytes: Buffer.byteLength(JSON.stringify({ name, attributes: slice })) })
    }
  }
  return parts
}

/**
 * The POST /v1/types requests that declare `eventTypes` and `objectTypes` (see the module comment).
 * @param keyPrefix the import's `--key-prefix`, put into each request's idempotency key.
 */
export function declarationRequests(
  eventTypes: readonly OcelTypeDeclaration[],
  objectTypes: readonly OcelTypeDeclaration[],
  keyPrefix: string,
): DeclarationPlan {
  const leftOut: string[] = []
  const events = merged(eventTypes, 'event', leftOut)
  const objects = merged(objectTypes, 'object', leftOut)
  const requests: TypesInput[] = []
  let current: { event_types: Part[]; object_types: Part[]; bytes: number } = { event_types: [], object_types: [], bytes: 0 }
  const flush = () => {
    if (current.event_types.length + current.object_types.length === 0) return
    const body: TypesInput = {}
    if (current.event_types.length > 0) body.event_types = current.event_types.map((p) => ({ name: p.name, attributes: p.attributes }))
    if (current.object_types.length > 0) body.object_types = current.object_types.map((p) => ({ name: p.name, attributes: p.attributes }))
    requests.push({ ...body, idempotency_key: `ocel:${keyPrefix}types:${fingerprintOf(body)}` })
    current = { event_types: [], object_types: [], bytes: 0 }
  }
  for (const part of [...partsOf('event', events), ...partsOf('object', objects)]) {
    const list = part.kind === 'event' ? current.event_types : current.object_types
    // A type appears once per request: its next part (more attributes) goes into the next one.
    const full = list.length >= LIMITS.declaredTypesMax || current.bytes + part.bytes > REQUEST_BYTES || list.some((p) => p.name === part.name)
    if (full) flush()
    ;(part.kind === 'event' ? current.event_types : current.object_types).push(part)
    current.bytes += part.bytes
  }
  flush()
  return { requests, eventTypes: events.size, objectTypes: objects.size, leftOut }
}

/** What sending the declarations did (the import summary's `declared`). */
export interface DeclarationOutcome {
  /** Distinct event and object types sent (DeclarationPlan). */
  event_types: number
  object_types: number
  /** Requests made, and of those the ones the dataset already held under their idempotency keys (a re-run). */
  requests: number
  already_recorded: number
  /** Declarations left out (DeclarationPlan.leftOut). */
  left_out: string[]
  /** Why a request failed (the rest were still sent), or null. */
  failed: string | null
}

/**
 * Sends the plan's requests one after the other with `send` (OcelogClient.declareTypes).
 * @returns the outcome; a request that fails is reported in `failed` (the first failure's message), never thrown.
 */
export async function sendDeclarations(plan: DeclarationPlan, send: (body: TypesInput) => Promise<TypesResponse>): Promise<DeclarationOutcome> {
  const outcome: DeclarationOutcome = {
    event_types: plan.eventTypes,
    object_types: plan.objectTypes,
    requests: 0,
    already_recorded: 0,
    left_out: plan.leftOut,
    failed: null,
  }
  for (const body of plan.requests) {
    outcome.requests += 1
    try {
      if ((await send(body)).duplicate) outcome.already_recorded += 1
    } catch (error) {
      outcome.failed ??= messageOf(error)
    }
  }
  return outcome
}
