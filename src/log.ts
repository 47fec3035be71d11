/** pino, with token-bearing fields redacted wherever they appear. */
import { pino, type Logger, type DestinationStream } from 'pino';

export type { Logger };

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'endpoint-control-service' },
      redact: {
        paths: ['token', '*.token', 'headers["x-auth-token"]', '*.headers["x-auth-token"]', 'secret', '*.secret'],
        censor: '[redacted]',
      },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
}
