/**
 * unit: how the `variants` tool's text shows a path: runs of one activity compressed, and a long
 * path as its first and last runs with the steps between counted.
 */
import { describe, expect, it } from 'vitest'
import { PATH_RUNS_SHOWN, runsOf, variantPath } from '../../src/mcp/tools.js'

describe('runsOf', () => {
  it('groups one activity in a row, in order', () => {
    expect(runsOf(['A', 'A', 'B', 'A'])).toEqual([
      { activity: 'A', count: 2 },
      { activity: 'B', count: 1 },
      { activity: 'A', count: 1 },
    ])
    expect(runsOf([])).toEqual([])
  })
})

describe('variantPath', () => {
  it('says the steps and compresses runs: Check Item ×12', () => {
    const steps = ['Place Order', ...Array.from({ length: 12 }, () => 'Check Item'), 'Ship']
    expect(variantPath(steps)).toBe('14 steps: Place Order → Check Item ×12 → Ship')
    expect(variantPath(['Only'])).toBe('1 step: Only')
  })

  it('shows a path of exactly PATH_RUNS_SHOWN runs whole', () => {
    const steps = Array.from({ length: PATH_RUNS_SHOWN }, (_, i) => `a${String(i)}`)
    expect(variantPath(steps)).toBe(`20 steps: ${steps.join(' → ')}`)
  })

  it('shows a longer path as its first and last 10 runs with the steps between counted', () => {
    // 1,670 steps alternating four activities, with one run of three at the start: no run compresses further.
    const cycle = ['Check Item', 'Pick Item', 'Pack Item', 'Send Package']
    const steps = ['Check Item', 'Check Item', ...Array.from({ length: 1668 }, (_, i) => cycle[i % 4] as string)]
    const text = variantPath(steps)
    const parts = text.slice('1,670 steps: '.length).split(' → ')
    expect(text.startsWith('1,670 steps: Check Item ×3 → Pick Item → Pack Item')).toBe(true)
    expect(parts).toHaveLength(21)
    const shownSteps = [...parts.slice(0, 10), ...parts.slice(11)].reduce((n, p) => n + Number(/ ×(\d+)$/.exec(p)?.[1] ?? 1), 0)
    expect(parts[10]).toBe(`… ${(1670 - shownSteps).toLocaleString('en-US')} steps …`)
    expect(parts.slice(11)).toEqual(steps.slice(-10))
    expect(text.length).toBeLessThan(400)
  })
})
