/**
 * `node --import ./trace-modules.mjs …`: appends the path or URL of every module the process
 * loads, one per line, to the file named by OCELOG_TRACE_MODULES. ES modules are seen by a resolve
 * hook (node:module `register`, run on node's hooks thread: trace-modules-hooks.mjs); CommonJS
 * modules by `Module._resolveFilename`, which every `require` goes through (Node 20's hooks do not
 * see `require`) but for a `node:`-prefixed built-in, which `Module._load` serves without it: those
 * are written as their `node:` name. For tests of what a process loads (test/e2e/serve-footprint.test.ts,
 * test/integration/unit-tier.test.ts).
 */
import { appendFileSync } from 'node:fs'
import Module, { register } from 'node:module'

const log = process.env.OCELOG_TRACE_MODULES
if (log !== undefined) {
  register(new URL('./trace-modules-hooks.mjs', import.meta.url))
  const resolveFilename = Module._resolveFilename
  Module._resolveFilename = function traced(...args) {
    const filename = resolveFilename.apply(this, args)
    appendFileSync(log, `${filename}\n`)
    return filename
  }
  const load = Module._load
  Module._load = function tracedLoad(request, ...rest) {
    if (typeof request === 'string' && request.startsWith('node:')) appendFileSync(log, `${request}\n`)
    return load.call(this, request, ...rest)
  }
}
