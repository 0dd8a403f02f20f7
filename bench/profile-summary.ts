/**
 * Summarises a V8 .cpuprofile (from `node --cpu-prof`, e.g. `npm run bench -- --cpu-prof DIR`):
 * the functions with the most self time and the most inclusive time, as shares of the profile.
 *
 * Usage: node dist/bench/profile-summary.js FILE.cpuprofile [--top N] [--filter TEXT]
 */
import { readFileSync } from 'node:fs'
import { relative } from 'node:path'
import { Command } from 'commander'
import { exitWhenStdoutCloses } from '../src/cli/stdout.js'
import { ROOT } from './processes.js'

interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
  children?: number[]
}

interface Profile {
  nodes: ProfileNode[]
  samples: number[]
  timeDeltas: number[]
}

function isProfile(value: unknown): value is Profile {
  return typeof value === 'object' && value !== null && 'nodes' in value && 'samples' in value && 'timeDeltas' in value
}

function frameName(n: ProfileNode): string {
  const url = n.callFrame.url.replace(/^file:\/\//, '')
  const where = url === '' ? '' : ` ${url.startsWith(ROOT) ? relative(ROOT, url) : url}:${String(n.callFrame.lineNumber + 1)}`
  return `${n.callFrame.functionName || '(anonymous)'}${where}`
}

/** Self and inclusive microseconds per function name (recursion counted once per sample). */
export function summarise(profile: Profile): { total: number; self: Map<string, number>; inclusive: Map<string, number> } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const parent = new Map<number, number>()
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const self = new Map<string, number>()
  const inclusive = new Map<string, number>()
  let total = 0
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0
    total += dt
    const node = byId.get(id)
    if (node === undefined) return
    const name = frameName(node)
    self.set(name, (self.get(name) ?? 0) + dt)
    const seen = new Set<string>()
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const n = byId.get(cur)
      if (n === undefined) break
      const key = frameName(n)
      if (seen.has(key)) continue
      seen.add(key)
      inclusive.set(key, (inclusive.get(key) ?? 0) + dt)
    }
  })
  return { total, self, inclusive }
}

/**
 * Stretches of consecutive busy samples (the thread never went idle): the event loop was blocked
 * that long. Each comes with the functions holding most of its self time.
 */
export function longTasks(profile: Profile, top: number): { startMs: number; ms: number; heaviest: string[] }[] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const tasks: { startMs: number; ms: number; heaviest: string[] }[] = []
  let t = 0
  let start = -1
  let self = new Map<string, number>()
  const close = () => {
    if (start < 0) return
    const heaviest = [...self.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 3)
      .map(([k, v]) => `${k} ${(v / 1e3).toFixed(0)} ms`)
    tasks.push({ startMs: start / 1e3, ms: (t - start) / 1e3, heaviest })
    start = -1
    self = new Map()
  }
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0
    const node = byId.get(id)
    const name = node === undefined ? '?' : frameName(node)
    if (name.startsWith('(idle)')) close()
    else {
      if (start < 0) start = t
      self.set(name, (self.get(name) ?? 0) + dt)
    }
    t += dt
  })
  close()
  return tasks.sort((a, b) => b.ms - a.ms).slice(0, top)
}

function main(): void {
  const program = new Command('profile-summary')
    .description('Top functions of a V8 .cpuprofile by self and inclusive time')
    .argument('<file>', '.cpuprofile written by node --cpu-prof')
    .option('--top <n>', 'rows per list', (v) => Number(v), 25)
    .option('--filter <text>', 'only functions whose name or file contains text')
    .option('--long-tasks', 'also list the longest stretches without an idle sample (event-loop blocks)')
    .parse(process.argv)
  const [file] = program.args
  const o = program.opts<{ top: number; filter?: string; longTasks?: boolean }>()
  if (file === undefined) throw new Error('give a .cpuprofile file')
  const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'))
  if (!isProfile(parsed)) throw new Error(`${file} is not a V8 CPU profile`)
  const { total, self, inclusive } = summarise(parsed)
  const show = (title: string, map: Map<string, number>) => {
    process.stdout.write(`\n${title} (of ${(total / 1e6).toFixed(1)} s sampled)\n`)
    const rows = [...map.entries()]
      .filter(([k]) => o.filter === undefined || k.includes(o.filter))
      .sort((a, b) => b[1] - a[1])
      .slice(0, o.top)
    for (const [name, us] of rows) process.stdout.write(`${((100 * us) / total).toFixed(1).padStart(5)}%  ${(us / 1e3).toFixed(0).padStart(7)} ms  ${name}\n`)
  }
  show('self time', self)
  show('inclusive time', inclusive)
  if (o.longTasks === true) {
    process.stdout.write('\nlongest busy stretches (event loop blocked)\n')
    for (const task of longTasks(parsed, o.top)) {
      process.stdout.write(`${task.ms.toFixed(1).padStart(8)} ms at ${(task.startMs / 1e3).toFixed(2)} s: ${task.heaviest.join('; ')}\n`)
    }
  }
}

exitWhenStdoutCloses()
main()
