import { pino, type Logger } from 'pino'

/**
 * The service's pino logger (JSON lines on stdout). Fastify's request serializer logs no headers;
 * the redaction guards the key headers against a later change of serializer, so a secret never
 * reaches a log.
 * @param level pino level (LOG_LEVEL).
 */
export function createLogger(level: string): Logger {
  return pino({ level, redact: ['req.headers.authorization', 'req.headers["x-ocelog-api-key"]', 'headers.authorization', 'headers["x-ocelog-api-key"]'] })
}
