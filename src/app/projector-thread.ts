/**
 * The entry of the embedded projector's worker thread (started by src/projector/embedded.ts): the
 * composition root gives the thread its backends and logger, src/projector/worker.ts does the rest.
 */
import { runProjectorThread } from '../projector/worker.js'
import { openEmbeddedProjectorBackends } from './composition.js'
import { createLogger } from './logger.js'

void runProjectorThread(openEmbeddedProjectorBackends, createLogger)
