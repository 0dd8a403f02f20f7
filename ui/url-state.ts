/**
 * The page's view state in the URL hash, so that a view can be linked and bookmarked and loading
 * such a URL restores it (README § The web page). The hash is the view, `#map`, `#performance`,
 * `#variants`, `#compare`, or one object, `#object/<type>/<id>` (each part URI-encoded), then
 * optionally `?` and the settings that differ from the defaults as URL query parameters:
 * `type` (repeated: the chosen object types; absent: all; one empty `type=`: none), `from` and
 * `to` (the time range, `datetime-local` values read as UTC), `measure` (the map's edge labels),
 * `ptype` (the object type of the map's main paths), `vtype` (the object type of the variants tab)
 * and `a_from`, `a_to`, `b_from`, `b_to` (the compare tab's windows). Pure: no DOM.
 */

/** The page's views: each is a section `#view-<name>`. */
export type View = 'map' | 'performance' | 'variants' | 'compare' | 'object'
/** Every view, in the order of the tabs (the object view last: it has no tab). */
export const VIEWS: readonly View[] = ['map', 'performance', 'variants', 'compare', 'object']

/** What the URL hash holds. Empty strings are "not set" (the page's default). */
export interface ViewState {
  view: View
  /** The object shown when `view` is `object`, else null. */
  object: { type: string; id: string } | null
  /** The chosen object types; null: all of them. */
  types: string[] | null
  from: string
  to: string
  measure: string
  pathsType: string
  variantType: string
  aFrom: string
  aTo: string
  bFrom: string
  bTo: string
}

/** The state of a page with nothing chosen: the map of every type over all time. */
export const DEFAULT_STATE: ViewState = {
  view: 'map',
  object: null,
  types: null,
  from: '',
  to: '',
  measure: '',
  pathsType: '',
  variantType: '',
  aFrom: '',
  aTo: '',
  bFrom: '',
  bTo: '',
}

/** Query parameter of each plain string setting. */
const PARAMS = [
  ['from', 'from'],
  ['to', 'to'],
  ['measure', 'measure'],
  ['pathsType', 'ptype'],
  ['variantType', 'vtype'],
  ['aFrom', 'a_from'],
  ['aTo', 'a_to'],
  ['bFrom', 'b_from'],
  ['bTo', 'b_to'],
] as const

/** The hash of the object view for an object (its type and its own id), without settings. */
export function objectHash(type: string, id: string): string {
  return `#object/${encodeURIComponent(type)}/${encodeURIComponent(id)}`
}

/** `state` as a URL hash (`#view` or `#object/<type>/<id>`, then `?settings` when any is set). */
export function formatHash(state: ViewState): string {
  const head =
    state.view === 'object' && state.object !== null ? objectHash(state.object.type, state.object.id) : `#${state.view === 'object' ? 'map' : state.view}`
  const params = new URLSearchParams()
  if (state.types !== null) {
    if (state.types.length === 0) params.append('type', '')
    for (const t of state.types) params.append('type', t)
  }
  for (const [field, name] of PARAMS) if (state[field] !== '') params.set(name, state[field])
  const query = params.toString()
  return query === '' ? head : `${head}?${query}`
}

/**
 * Parses a URL hash into a view state: unknown views and undecodable parts fall back to the
 * defaults (the map); `settings` says whether the hash carried any `?` part at all.
 */
export function parseHash(hash: string): { state: ViewState; settings: boolean } {
  const body = hash.startsWith('#') ? hash.slice(1) : hash
  const q = body.indexOf('?')
  const head = q < 0 ? body : body.slice(0, q)
  const query = q < 0 ? null : body.slice(q + 1)
  const state: ViewState = { ...DEFAULT_STATE }
  const object = /^object\/([^/]+)\/(.+)$/.exec(head)
  if (object?.[1] !== undefined && object[2] !== undefined) {
    try {
      state.object = { type: decodeURIComponent(object[1]), id: decodeURIComponent(object[2]) }
      state.view = 'object'
    } catch {
      state.object = null
    }
  } else {
    const view = VIEWS.find((v) => v === head && v !== 'object')
    if (view !== undefined) state.view = view
  }
  if (query === null) return { state, settings: false }
  const params = new URLSearchParams(query)
  if (params.has('type')) state.types = params.getAll('type').filter((t) => t !== '')
  for (const [field, name] of PARAMS) state[field] = params.get(name) ?? ''
  return { state, settings: true }
}
