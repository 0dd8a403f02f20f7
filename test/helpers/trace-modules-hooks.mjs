/** The resolve hook of trace-modules.mjs: appends each resolved ES module URL to $OCELOG_TRACE_MODULES. */
import { appendFileSync } from 'node:fs'

export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context)
  const log = process.env.OCELOG_TRACE_MODULES
  if (log !== undefined) appendFileSync(log, `${resolved.url}\n`)
  return resolved
}
