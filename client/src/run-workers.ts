/**
 * The worker loop, written once (client-go processNextWorkItem, controller-runtime TerminalError).
 */
import { TerminalError } from '@mk8s/api';
import type { Logger } from '@mk8s/component-base';
import type { ObjectKey, RateLimitingQueue, Reconciler } from './interfaces.js';

/** Optional hooks for metrics (e.g. prom-client counters/histograms) around each reconcile. */
export interface WorkerMetrics {
  /** Called after every reconcile with its outcome and duration. */
  observeReconcile(o: { controller: string; result: 'success' | 'requeue' | 'error' | 'terminal'; durationMs: number }): void;
  /** Called when a key is taken from the queue, with the queue's depth. */
  observeDepth?(o: { controller: string; depth: number }): void;
}

/** Options for {@link runWorkers}. */
export interface RunWorkersOptions {
  /** The controller's name (log field `controller`). */
  name: string;
  queue: RateLimitingQueue<ObjectKey>;
  reconciler: Reconciler;
  /** Number of concurrent workers; one key is never reconciled by two at once. */
  workers: number;
  logger: Logger;
  /** Aborting shuts the queue down; runWorkers resolves once every worker has finished its key. */
  signal: AbortSignal;
  metrics?: WorkerMetrics;
  /** Used for durations. @default Date.now */
  now?: () => number;
}

/**
 * runWorkers pulls keys from the queue and reconciles them until the signal aborts. A success
 * forgets the key's backoff (and honours requeueAfterMs); an error requeues it rate-limited; a
 * TerminalError forgets it.
 */
export async function runWorkers({ name, queue, reconciler, workers, logger, signal, metrics, now = Date.now }: RunWorkersOptions): Promise<void> {
  if (signal.aborted) queue.shutDown();
  else signal.addEventListener('abort', () => queue.shutDown(), { once: true });
  const worker = async (): Promise<void> => {
    for (let key = await queue.get(); key !== undefined; key = await queue.get()) {
      metrics?.observeDepth?.({ controller: name, depth: queue.len() });
      const start = now();
      let result: 'success' | 'requeue' | 'error' | 'terminal' = 'success';
      try {
        const res = await reconciler.reconcile(key, signal);
        queue.forget(key); // success resets this key's backoff
        if (res?.requeueAfterMs) { result = 'requeue'; queue.addAfter(key, res.requeueAfterMs); }
      } catch (err) {
        const log = logger.child({ controller: name, key });
        if (err instanceof TerminalError) {
          result = 'terminal';
          queue.forget(key);
          log.error({ err }, 'Reconcile failed permanently');
        } else {
          result = 'error';
          queue.addRateLimited(key);
          if (!signal.aborted) log.warn({ err, requeues: queue.numRequeues(key) }, 'Reconcile failed, requeued');
        }
      } finally {
        queue.done(key); // always: lets a key re-added meanwhile run again
        metrics?.observeReconcile({ controller: name, result, durationMs: now() - start });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, workers) }, worker));
}
