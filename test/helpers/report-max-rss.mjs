// Loaded with `node --import` into a child process: prints its peak RSS (kB, process.resourceUsage().maxRSS) on stderr when it exits.
process.on('exit', () => {
  process.stderr.write(`max-rss-kb ${String(process.resourceUsage().maxRSS)}\n`)
})
