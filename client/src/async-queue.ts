/** An unbounded push → AsyncIterable channel (the Go `chan` of this codebase). */
export class AsyncQueue<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private waiter: { resolve: (r: IteratorResult<T>) => void; reject: (e: unknown) => void } | undefined;
  private ended = false;
  private failure: { err: unknown } | undefined;

  /** Adds an item; ignored after end/fail. */
  push(item: T): void {
    if (this.ended || this.failure) return;
    const w = this.waiter;
    if (w) { this.waiter = undefined; w.resolve({ value: item, done: false }); } else this.items.push(item);
  }
  /** Ends the stream after the buffered items. */
  end(): void {
    if (this.ended || this.failure) return;
    this.ended = true;
    const w = this.waiter;
    if (w && this.items.length === 0) { this.waiter = undefined; w.resolve({ value: undefined, done: true }); }
  }
  /** Makes the consumer throw err after the buffered items. */
  fail(err: unknown): void {
    if (this.ended || this.failure) return;
    this.failure = { err };
    const w = this.waiter;
    if (w && this.items.length === 0) { this.waiter = undefined; w.reject(err); }
  }
  get isClosed(): boolean { return this.ended || !!this.failure; }

  next(): Promise<IteratorResult<T>> {
    if (this.items.length) return Promise.resolve({ value: this.items.shift() as T, done: false });
    if (this.failure) return Promise.reject(this.failure.err);
    if (this.ended) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => { this.waiter = { resolve, reject }; });
  }

  /** Called when the consumer stops iterating early (break/return). */
  onReturn: (() => void) | undefined;

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => this.next(),
      return: () => { this.onReturn?.(); this.end(); this.items.length = 0; return Promise.resolve({ value: undefined, done: true }); },
    };
  }
}
