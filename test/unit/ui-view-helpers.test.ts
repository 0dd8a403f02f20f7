/**
 * Unit: the pure parts of the `/ui/` page: the view state in the URL hash (ui/url-state.ts), the
 * collapsed and cut variant paths (ui/variant-path.ts), and the graph's first and fitted zoom
 * (ui/zoom.ts).
 */
import { describe, expect, it } from 'vitest'
import { cssPixels, fitScale, initialScale, MIN_SCALE } from '../../ui/zoom.js'
import { DEFAULT_STATE, formatHash, parseHash, type ViewState } from '../../ui/url-state.js'
import { collapseRuns, pathParts, pathText } from '../../ui/variant-path.js'

describe('URL hash state', () => {
  it('round-trips every setting, with types and ids that need escaping', () => {
    const state: ViewState = {
      ...DEFAULT_STATE,
      view: 'object',
      object: { type: 'purchase order', id: 'o/1?x=#2' },
      types: ['item', 'purchase order'],
      from: '2024-05-01T00:00',
      to: '2024-05-02T00:00:30',
      measure: 'waiting',
      variantType: 'item',
      aFrom: '2024-01-01T00:00',
    }
    const hash = formatHash(state)
    expect(hash.startsWith('#object/purchase%20order/o%2F1%3Fx%3D%232?')).toBe(true)
    expect(parseHash(hash)).toEqual({ state, settings: true })
  })

  it('writes nothing for the defaults, and an empty type for no type chosen', () => {
    expect(formatHash(DEFAULT_STATE)).toBe('#map')
    expect(formatHash({ ...DEFAULT_STATE, view: 'variants', types: [] })).toBe('#variants?type=')
    expect(parseHash('#variants?type=').state.types).toEqual([])
    expect(parseHash('#compare')).toEqual({ state: { ...DEFAULT_STATE, view: 'compare' }, settings: false })
  })

  it('falls back to the map for unknown views, a bare object hash, and bad escapes', () => {
    expect(parseHash('').state.view).toBe('map')
    expect(parseHash('#nonsense?from=x').state).toEqual({ ...DEFAULT_STATE, from: 'x' })
    expect(parseHash('#object').state.view).toBe('map')
    expect(parseHash('#object/order/%E0%A4%A').state).toEqual(DEFAULT_STATE)
  })
})

describe('variant paths', () => {
  it('collapses repeated activities into one step with its count', () => {
    expect(collapseRuns(['Create', 'Check Item', 'Check Item', 'Check Item', 'Ship', 'Check Item'])).toEqual([
      { activity: 'Create', count: 1 },
      { activity: 'Check Item', count: 3 },
      { activity: 'Ship', count: 1 },
      { activity: 'Check Item', count: 1 },
    ])
    expect(pathText(['Create', ...Array<string>(12).fill('Check Item'), 'Ship'])).toBe('Create → Check Item ×12 → Ship (14 steps)')
    expect(pathText(['Create', 'Ship'])).toBe('Create → Ship')
  })

  it('cuts a long path to its first and last five steps with the events left out between them', () => {
    // 30 distinct steps, the 10th repeated 3 times: 32 events; steps 6..25 (22 events) are left out.
    const activities = Array.from({ length: 30 }, (_, i) => `A${String(i)}`)
    activities.splice(9, 0, 'A9', 'A9')
    const parts = pathParts(activities)
    expect(parts).toEqual([
      { activity: 'A0', count: 1 },
      { activity: 'A1', count: 1 },
      { activity: 'A2', count: 1 },
      { activity: 'A3', count: 1 },
      { activity: 'A4', count: 1 },
      { skipped: 22 },
      { activity: 'A25', count: 1 },
      { activity: 'A26', count: 1 },
      { activity: 'A27', count: 1 },
      { activity: 'A28', count: 1 },
      { activity: 'A29', count: 1 },
    ])
    expect(pathText(activities)).toBe('A0 → A1 → A2 → A3 → A4 → … 22 steps … → A25 → A26 → A27 → A28 → A29 (32 steps)')
    // Eleven steps are shown whole.
    expect(pathParts(activities.slice(0, 13))).toHaveLength(11)
  })
})

describe('graph zoom', () => {
  it('fits the width first, but never under the smallest readable label nor above natural size', () => {
    expect(MIN_SCALE).toBeCloseTo(10 / 12)
    expect(initialScale({ width: 500, height: 300 }, { width: 1000, height: 700 })).toBe(1)
    expect(initialScale({ width: 1100, height: 300 }, { width: 1000, height: 700 })).toBeCloseTo(1000 / 1100)
    expect(initialScale({ width: 5000, height: 300 }, { width: 1000, height: 700 })).toBe(MIN_SCALE)
  })

  it('zooms to fit the whole graph in both directions', () => {
    expect(fitScale({ width: 5000, height: 1400 }, { width: 1000, height: 700 })).toBe(0.2)
    expect(fitScale({ width: 2000, height: 7000 }, { width: 1000, height: 700 })).toBe(0.1)
    expect(fitScale({ width: 200, height: 100 }, { width: 1000, height: 700 })).toBe(1)
  })

  it('reads Graphviz lengths as CSS pixels', () => {
    expect([cssPixels('75pt'), cssPixels('80px'), cssPixels('30'), cssPixels('auto'), cssPixels(null)]).toEqual([100, 80, 40, null, null])
  })
})
