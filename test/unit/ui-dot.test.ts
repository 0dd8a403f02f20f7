import { describe, expect, it } from 'vitest'
import type { ProcessMapResponse } from '../../src/schemas/process.js'
import { formatDuration, processMapDot } from '../../ui/dot.js'

const stats = (median: number) => ({ count: 1, mean: median, median, min: median, max: median, sum: median })

const MAP: ProcessMapResponse = {
  dataset_id: 'd',
  as_of: 3,
  median_relative_error: 0,
  object_types: [
    {
      object_type: 'order',
      objects: 2,
      activities: [
        { activity: 'Create "A"', events: 2, objects: 2, total: 2, run_time: stats(600) },
        { activity: 'Pay', events: 1, objects: 1, total: 1, run_time: null },
      ],
      edges: [{ source: 'Create "A"', target: 'Pay', total: 1, objects: 1, event_couples: 1, elapsed: stats(3600), waiting: stats(3000) }],
      start_activities: [{ activity: 'Create "A"', objects: 2 }],
      end_activities: [{ activity: 'Pay', objects: 1 }],
    },
    {
      object_type: 'item',
      objects: 1,
      activities: [{ activity: 'Pay', events: 1, objects: 1, total: 1, run_time: null }],
      edges: [],
      start_activities: [{ activity: 'Pay', objects: 1 }],
      end_activities: [{ activity: 'Pay', objects: 1 }],
    },
  ],
}

describe('processMapDot', () => {
  it('labels activities with their events and median run time, quoting DOT strings', () => {
    const dot = processMapDot(MAP, 'frequency')
    expect(dot).toContain('a0 [label="Create \\"A\\"\\n2 events\\nrun time 10.0 min"')
    expect(dot).toContain('a1 [label="Pay\\n1 event"')
  })

  it('fills and relabels the activities a look is given for, and leaves the others as they were', () => {
    const dot = processMapDot(MAP, 'frequency', [], undefined, (activity) =>
      activity === 'Pay' ? { fill: '#990000', font: '#ffffff', lines: ['1 event', 'sojourn 50.0 min', 'waits for order'] } : undefined,
    )
    expect(dot).toContain('a1 [label="Pay\\n1 event\\nsojourn 50.0 min\\nwaits for order", fillcolor="#990000", fontcolor="#ffffff", tooltip=')
    expect(dot).toContain('a0 [label="Create \\"A\\"\\n2 events\\nrun time 10.0 min", tooltip=')
  })

  it('labels edges with occurrences, median waiting or median elapsed time', () => {
    expect(processMapDot(MAP, 'frequency')).toMatch(/a0 -> a1 \[[^\]]*label="1"/)
    expect(processMapDot(MAP, 'waiting')).toMatch(/a0 -> a1 \[[^\]]*label="50.0 min"/)
    expect(processMapDot(MAP, 'elapsed')).toMatch(/a0 -> a1 \[[^\]]*label="1.0 h"/)
  })

  it('draws only the selected object types, in their colours', () => {
    const dot = processMapDot(MAP, 'frequency', ['item'], (type) => (type === 'item' ? '#00ff00' : '#ff0000'))
    expect(dot).not.toContain('Create')
    expect(dot).toContain('s1 [shape=ellipse, style=filled, fillcolor="#00ff00"')
    expect(dot).not.toContain('s0 ')
  })
})

describe('formatDuration', () => {
  it.each([
    [0.25, '250 ms'],
    [5, '5.0 s'],
    [45, '45 s'],
    [750, '12.5 min'],
    [3 * 3600, '3.0 h'],
    [2.5 * 86_400, '2.5 d'],
  ])('writes %s s as %s', (seconds, text) => {
    expect(formatDuration(seconds)).toBe(text)
  })
})
