import { pino, type Logger, type LoggerOptions, type DestinationStream } from 'pino';

export type { Logger };

/** Options for {@link createLogger}. */
export interface LoggerConfig {
  /** Component name put on every line (`component` field). */
  component?: string;
  /** @default process.env.LOG_LEVEL ?? 'info' */
  level?: string;
  /** Where lines go; tests pass a sink stream. @default stdout */
  destination?: DestinationStream;
}

/** createLogger returns the project's structured logger (pino, JSON lines). */
export function createLogger(cfg: LoggerConfig = {}): Logger {
  const opts: LoggerOptions = {
    level: cfg.level ?? process.env['LOG_LEVEL'] ?? 'info',
    base: cfg.component ? { component: cfg.component } : {},
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  return cfg.destination ? pino(opts, cfg.destination) : pino(opts);
}

/** A logger that drops everything (unit tests that do not assert on logs). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
