/**
 * The process map as a Graphviz DOT graph, in the look of pm4py's object-centric DFG: one colour
 * per object type; activities as boxes labelled with their counts and median run time; per type a
 * start node and an end node in its colour; directly-follows edges in the colour of their type,
 * thicker the more often they occur, labelled with their frequency or their median waiting or
 * elapsed time. Pure (no DOM), so it runs in the page and in unit tests.
 */
import type { ObjectTypeMap, ProcessMapResponse, Stats } from '../src/schemas/process.js'

/** What edge labels show: occurrences, or the median waiting or elapsed time. */
export type EdgeMeasure = 'frequency' | 'waiting' | 'elapsed'

/** Colours of object types, in the order of the map's (sorted) types; they repeat after 10. */
export const TYPE_COLOURS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#17becf', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22'] as const

/** The colour of the i-th object type. */
export function typeColour(index: number): string {
  return TYPE_COLOURS[index % TYPE_COLOURS.length] ?? '#1f77b4'
}

/** A duration in seconds as people read it: `45 s`, `12.5 min`, `3.2 h`, `4.1 d`. */
export function formatDuration(seconds: number): string {
  const s = Math.abs(seconds)
  if (s < 1) return `${String(Math.round(seconds * 1000))} ms`
  if (s < 60) return `${seconds.toFixed(s < 10 ? 1 : 0)} s`
  if (s < 3600) return `${(seconds / 60).toFixed(1)} min`
  if (s < 86_400) return `${(seconds / 3600).toFixed(1)} h`
  return `${(seconds / 86_400).toFixed(1)} d`
}

/** A count with thousands separators. */
export function formatCount(n: number): string {
  return n.toLocaleString('en-US')
}

/** A DOT double-quoted string. */
function quote(text: string): string {
  return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`
}

function edgeLabel(measure: EdgeMeasure, total: number, elapsed: Stats, waiting: Stats | null): string {
  switch (measure) {
    case 'frequency':
      return formatCount(total)
    case 'elapsed':
      return formatDuration(elapsed.median)
    case 'waiting':
      return waiting === null ? `(${formatDuration(elapsed.median)} elapsed)` : formatDuration(waiting.median)
  }
}

/** How one activity box is drawn instead of white (the performance view colours it by median sojourn). */
export interface NodeLook {
  /** Fill colour (#rrggbb). */
  fill: string
  /** Text colour readable on `fill`. */
  font: string
  /** Lines added below the activity's name (replacing its events and run time). */
  lines: string[]
}

interface ActivityNode {
  id: string
  /** (type index, events of the activity among objects of that type, run time) per type it occurs in. */
  perType: { type: number; events: number; run: Stats | null }[]
}

/**
 * The DOT source of `map` for the object types in `selected` (all when empty), with edge labels
 * of `measure`, each type drawn in `colourOf(type, index in map)`. Node ids are stable (`a0`, `a1`,
 * … by activity name; `s<i>` / `e<i>` per type). An activity's label gives its events: the most
 * of any selected type (its per-type counts are in the tooltip). `look(activity)`, when given and
 * not undefined, fills that activity's box and replaces its second and third lines.
 */
export function processMapDot(
  map: ProcessMapResponse,
  measure: EdgeMeasure,
  selected: readonly string[] = [],
  colourOf: (type: string, index: number) => string = (_type, index) => typeColour(index),
  look: (activity: string) => NodeLook | undefined = () => undefined,
): string {
  const indexed = map.object_types.map((t, i): [ObjectTypeMap, number] => [t, i])
  const types = selected.length === 0 ? indexed : indexed.filter(([t]) => selected.includes(t.object_type))
  const activities = new Map<string, ActivityNode>()
  for (const [t, i] of types) {
    for (const a of t.activities) {
      let node = activities.get(a.activity)
      if (node === undefined) {
        node = { id: '', perType: [] }
        activities.set(a.activity, node)
      }
      node.perType.push({ type: i, events: a.events, run: a.run_time })
    }
  }
  const names = [...activities.keys()].sort()
  names.forEach((name, k) => {
    const node = activities.get(name)
    if (node !== undefined) node.id = `a${String(k)}`
  })
  const maxTotal = Math.max(1, ...types.flatMap(([t]) => t.edges.map((e) => e.total)))

  const lines: string[] = [
    'digraph process_map {',
    '  graph [rankdir=TB, bgcolor="transparent", nodesep=0.45, ranksep=0.5, fontname="Helvetica", pad=0.2];',
    '  node [shape=box, style="rounded,filled", fillcolor="#ffffff", color="#4a4a4a", penwidth=1.2, fontname="Helvetica", fontsize=11, margin="0.18,0.08"];',
    '  edge [fontname="Helvetica", fontsize=9, arrowsize=0.7];',
  ]
  for (const name of names) {
    const node = activities.get(name)
    if (node === undefined) continue
    const busiest = [...node.perType].sort((x, y) => y.events - x.events)[0]
    const events = busiest?.events ?? 0
    const run = busiest?.run ?? null
    const styled = look(name)
    const label =
      styled === undefined
        ? `${name}\n${formatCount(events)} ${events === 1 ? 'event' : 'events'}${run === null ? '' : `\nrun time ${formatDuration(run.median)}`}`
        : [name, ...styled.lines].join('\n')
    const fill = styled === undefined ? '' : `, fillcolor=${quote(styled.fill)}, fontcolor=${quote(styled.font)}`
    const perType = node.perType.map((p) => `${types.find(([, i]) => i === p.type)?.[0].object_type ?? '?'}: ${formatCount(p.events)} events`).join('\n')
    lines.push(`  ${node.id} [label=${quote(label)}${fill}, tooltip=${quote(`${name}\n${perType}`)}];`)
  }
  for (const [t, i] of types) {
    const colour = colourOf(t.object_type, i)
    const start = `s${String(i)}`
    const end = `e${String(i)}`
    lines.push(
      `  ${start} [shape=ellipse, style=filled, fillcolor=${quote(colour)}, color=${quote(colour)}, fontcolor="#ffffff", fontsize=10, label=${quote(`${t.object_type}\n${formatCount(t.objects)}`)}, tooltip=${quote(`${t.object_type}: start`)}];`,
    )
    lines.push(
      `  ${end} [shape=doublecircle, style=filled, fillcolor=${quote(colour)}, color=${quote(colour)}, label="", width=0.22, tooltip=${quote(`${t.object_type}: end`)}];`,
    )
    for (const s of t.start_activities) {
      const target = activities.get(s.activity)
      if (target !== undefined)
        lines.push(
          `  ${start} -> ${target.id} [color=${quote(colour)}, style=dashed, label=${quote(measure === 'frequency' ? formatCount(s.objects) : '')}, fontcolor=${quote(colour)}];`,
        )
    }
    for (const s of t.end_activities) {
      const source = activities.get(s.activity)
      if (source !== undefined)
        lines.push(
          `  ${source.id} -> ${end} [color=${quote(colour)}, style=dashed, label=${quote(measure === 'frequency' ? formatCount(s.objects) : '')}, fontcolor=${quote(colour)}];`,
        )
    }
    for (const e of t.edges) {
      const source = activities.get(e.source)
      const target = activities.get(e.target)
      if (source === undefined || target === undefined) continue
      const width = 1 + 4 * Math.sqrt(e.total / maxTotal)
      const tip = `${t.object_type}: ${e.source} → ${e.target}\n${formatCount(e.total)} times, ${formatCount(e.objects)} objects\nmedian elapsed ${formatDuration(e.elapsed.median)}${e.waiting === null ? '' : `, median waiting ${formatDuration(e.waiting.median)}`}`
      lines.push(
        `  ${source.id} -> ${target.id} [color=${quote(colour)}, fontcolor=${quote(colour)}, penwidth=${width.toFixed(2)}, label=${quote(edgeLabel(measure, e.total, e.elapsed, e.waiting))}, tooltip=${quote(tip)}];`,
      )
    }
  }
  lines.push('}')
  return lines.join('\n')
}
