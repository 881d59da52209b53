/**
 * WatchQueue: the single-consumer AsyncIterable behind every Storage.watch. Producers push events,
 * progress marks, an error or the end; the consumer pulls. Progress marks travel in the same queue
 * as events so `onProgress(rv)` is only called after every earlier event was handed out: a bookmark
 * never overtakes the events it vouches for.
 */
import type { StorageEvent } from './interfaces.js';

type Item = { event: StorageEvent; rv?: undefined } | { event?: undefined; rv: string };

export interface WatchQueueOptions {
  signal: AbortSignal;
  onProgress?: ((resourceVersion: string) => void) | undefined;
  /** Called once when the queue stops for any reason (abort, consumer break, end, error). */
  onClose?: () => void;
}

export class WatchQueue implements AsyncIterableIterator<StorageEvent> {
  private items: Item[] = [];
  private head = 0;
  private error: unknown = undefined;
  private failed = false;
  private ended = false;
  private closed = false;
  private wake: (() => void) | undefined;
  private closeHooks: (() => void)[] = [];
  private readonly onAbort = () => this.end();

  constructor(private readonly opts: WatchQueueOptions) {
    if (opts.signal.aborted) this.end();
    else opts.signal.addEventListener('abort', this.onAbort, { once: true });
  }

  /** Number of buffered items not yet handed to the consumer. */
  get size(): number { return this.items.length - this.head; }
  /** True once end/fail was called or the signal aborted; pushes are then ignored. */
  get done(): boolean { return this.ended || this.failed; }

  push(event: StorageEvent): void {
    if (this.done) return;
    this.items.push({ event });
    this.notify();
  }

  /** Queues a progress mark; consecutive marks collapse into the newest. */
  progress(resourceVersion: string): void {
    if (this.done || !this.opts.onProgress) return;
    const last = this.items[this.items.length - 1];
    if (last && this.size > 0 && last.rv !== undefined) last.rv = resourceVersion;
    else this.items.push({ rv: resourceVersion });
    this.notify();
  }

  /** Ends the stream with err after the buffered items were consumed. */
  fail(err: unknown): void {
    if (this.done) return;
    this.failed = true;
    this.error = err;
    this.close();
    this.notify();
  }

  /** Ends the stream after the buffered items were consumed. */
  end(): void {
    if (this.done) return;
    this.ended = true;
    this.close();
    this.notify();
  }

  /** Ends the stream now, dropping whatever is buffered (abort / consumer gone). */
  private abandon(): void {
    this.items = [];
    this.head = 0;
    this.end();
  }

  async next(): Promise<IteratorResult<StorageEvent>> {
    for (;;) {
      if (this.opts.signal.aborted) { this.abandon(); return { done: true, value: undefined }; }
      if (this.head < this.items.length) {
        const item = this.items[this.head]!;
        this.items[this.head++] = undefined as unknown as Item;
        if (this.head > 1024 && this.head * 2 > this.items.length) { this.items = this.items.slice(this.head); this.head = 0; }
        if (item.event) return { done: false, value: item.event };
        this.opts.onProgress?.(item.rv);
        continue;
      }
      if (this.failed) {
        const err = this.error;
        this.error = undefined;
        this.failed = false;
        this.ended = true;
        throw err;
      }
      if (this.ended) return { done: true, value: undefined };
      await new Promise<void>((resolve) => { this.wake = resolve; });
    }
  }

  async return(): Promise<IteratorResult<StorageEvent>> {
    this.abandon();
    return { done: true, value: undefined };
  }

  [Symbol.asyncIterator](): this { return this; }

  /** Registers fn to run once when the queue stops (immediately if it already has). */
  onClosed(fn: () => void): void {
    if (this.closed) fn(); else this.closeHooks.push(fn);
  }

  private notify(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    this.opts.signal.removeEventListener('abort', this.onAbort);
    this.opts.onClose?.();
    for (const fn of this.closeHooks.splice(0)) fn();
  }
}
