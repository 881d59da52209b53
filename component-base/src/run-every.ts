/**
 * runEvery: the one periodic loop (apimachinery `wait.Until` / `wait.JitterUntil`): runs fn, then
 * waits periodMs, until signal aborts. A failing run is logged and the loop goes on, so a
 * transient error never ends a component's housekeeping. With `immediate: false` the first run
 * comes after one period. Resolves once the signal aborts (never rejects).
 */
import type { Clock } from './clock.js';
import type { Logger } from './logger.js';

export interface RunEveryOptions {
  clock: Clock;
  signal: AbortSignal;
  /** Where a failed run is logged (warn, with `what`). */
  logger?: Logger;
  /** What the loop does, for the log ('Housekeeping'). */
  what?: string;
  /** Run fn at once, before the first wait. @default true */
  immediate?: boolean;
}

export async function runEvery(periodMs: number, fn: () => void | Promise<void>, o: RunEveryOptions): Promise<void> {
  let first = o.immediate ?? true;
  while (!o.signal.aborted) {
    if (!first) {
      await o.clock.sleep(periodMs, o.signal).catch(() => undefined);
      if (o.signal.aborted) break;
    }
    first = false;
    try { await fn(); } catch (err) { o.logger?.warn({ err, what: o.what }, `${o.what ?? 'Periodic run'} failed`); }
  }
}
