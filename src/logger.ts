/** The process logger: structured JSON lines (pino), written asynchronously off the request path. */
import pino from 'pino';
import type { Logger } from 'pino';

export function createLogger(level: string): Logger {
  return pino(
    { level, base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime },
    pino.destination({ sync: false }),
  );
}
