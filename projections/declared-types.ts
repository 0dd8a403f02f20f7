/**
 * Projection of the `declared_types` read model (docs/read-models.md#declared_types): the event and
 * object types a dataset declared through POST /v1/types (`TypesDeclared` records), used by an
 * event or object or not, with their attribute declarations. A later declaration of a type adds its
 * attributes, and an attribute declared again takes the later type.
 */
import { type DeclaredKind, type DeclaredTypeChanges, KEY_SEP } from '../src/core/read-model-changes.js'
import type { RecordedTypeDeclaration, StoredRecord } from '../src/schemas/records.js'
import type { Projection } from './projection.js'
import { unreachable } from './unreachable.js'

/** Folds one declaration of `kind` at `position` into `types`. */
function declare(types: DeclaredTypeChanges, datasetId: string, kind: DeclaredKind, t: RecordedTypeDeclaration, position: number): void {
  const key = datasetId + KEY_SEP + kind + KEY_SEP + t.name
  let change = types.get(key)
  if (change === undefined) {
    change = { datasetId, kind, name: t.name, attributes: new Map(), minPosition: position, maxPosition: position }
    types.set(key, change)
  }
  change.maxPosition = position
  for (const a of t.attributes) change.attributes.set(a.name, { name: a.name, type: a.type, position })
}

/** Folds one record into the declared types' slice. */
function evolve(types: DeclaredTypeChanges, record: StoredRecord): void {
  switch (record.type) {
    case 'TypesDeclared':
      for (const t of record.data.event_types) declare(types, record.datasetId, 'event', t, record.position)
      for (const t of record.data.object_types) declare(types, record.datasetId, 'object', t, record.position)
      return
    case 'EventRecorded':
    case 'ObjectUpserted':
      return
    default:
      unreachable(record)
  }
}

export const declaredTypes: Projection<'declared_types'> = {
  name: 'declared_types',
  version: 1,
  readModels: ['declared_types'],
  emptySlice: () => new Map(),
  evolve,
}
