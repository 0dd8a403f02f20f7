/**
 * Process-wide runtime settings of the service (README § Operations: Memory): the node flags and
 * the environment that `npm start`, docker-compose.yml, the Dockerfile and the bench give its process.
 */

/**
 * The ceiling of the service's V8 heaps, in MiB, that `npm start`, docker-compose.yml and the bench
 * give the API thread (`node --max-old-space-size`, which only a flag can set: SERVICE_NODE_FLAGS).
 * The projector worker follows the API thread's ceiling, whatever set it (workerHeapMb in
 * src/projector/embedded.ts), so one flag sets both.
 *
 * Not a budget the service needs (its live heap after a worst-case load is about 35 MB on the API
 * thread) but what keeps its footprint near it: V8 lets garbage pile up until the heap reaches a
 * limit it sets after each full collection, the live size times a growing factor that it derives
 * from this ceiling (4 for the default ceiling of about 4 GiB on a 24 GiB machine, about 1.6 for
 * 1 GiB). With 1 GiB the bench's worst case peaks about a third lower than with V8's default, for
 * about 10% more CPU per event (more frequent full collections;
 * bench/HISTORY.md#2026-11-25-memory-the-disk-and-paced-load).
 *
 * A thread that needs more than this dies: the worker is restarted (its reads of the log are
 * bounded in bytes, PROJECTOR_READ_BYTES_MAX, so a run fits), and the API process exits, as under
 * any memory limit: what it acknowledged is in the log, and clients retry the rest with their
 * idempotency keys. To change it, start the service with another `--max-old-space-size` (a flag on
 * node's command line wins over NODE_OPTIONS; docker-compose.yml sets NODE_OPTIONS).
 */
export const SERVICE_HEAP_MB = 1024

/** The node flags of the service's process (see SERVICE_HEAP_MB). */
export const SERVICE_NODE_FLAGS: readonly string[] = [`--max-old-space-size=${String(SERVICE_HEAP_MB)}`]

/**
 * The environment `npm start`, docker-compose.yml and the bench give the service's process, beside
 * SERVICE_NODE_FLAGS: `MALLOC_ARENA_MAX=2` caps glibc's malloc at two arenas. glibc otherwise gives
 * threads that allocate at once arenas of their own (up to 8 per core), and memory freed in one is
 * not reused by another: here the API thread, the projector worker and libuv's threads, whose
 * SQLite page caches, statements and buffers are malloc'd (V8's heaps are not). Only the C library
 * reads it, when the process starts, so it cannot be set from inside. It lowers the bench's
 * worst-case peak RSS by about 10 MB, with single events and batches as fast
 * (bench/HISTORY.md#figures-behind-the-codes-settings). Other C libraries (musl, macOS) ignore it.
 */
export const SERVICE_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2' }
