/** A binary heap with keyed update and delete (client-go tools/cache heap as the queue uses it). */
export class Heap<T> {
  private items: T[] = [];
  private index = new Map<string, number>();
  constructor(private readonly keyOf: (x: T) => string, private readonly less: (a: T, b: T) => boolean) {}

  get size(): number { return this.items.length; }
  has(key: string): boolean { return this.index.has(key); }
  get(key: string): T | undefined { const i = this.index.get(key); return i === undefined ? undefined : this.items[i]; }
  peek(): T | undefined { return this.items[0]; }
  list(): T[] { return [...this.items]; }

  /** Adds x, or replaces the item with the same key and restores order. */
  addOrUpdate(x: T): void {
    const k = this.keyOf(x);
    const i = this.index.get(k);
    if (i !== undefined) { this.items[i] = x; this.fix(i); return; }
    this.items.push(x);
    this.index.set(k, this.items.length - 1);
    this.up(this.items.length - 1);
  }

  delete(key: string): T | undefined {
    const i = this.index.get(key);
    if (i === undefined) return undefined;
    const x = this.items[i]!;
    const last = this.items.pop()!;
    this.index.delete(key);
    if (i < this.items.length) {
      this.items[i] = last;
      this.index.set(this.keyOf(last), i);
      this.fix(i);
    }
    return x;
  }

  pop(): T | undefined {
    const top = this.items[0];
    if (top === undefined) return undefined;
    this.delete(this.keyOf(top));
    return top;
  }

  private fix(i: number): void { if (!this.up(i)) this.down(i); }
  private swap(i: number, j: number): void {
    const a = this.items[i]!; const b = this.items[j]!;
    this.items[i] = b; this.items[j] = a;
    this.index.set(this.keyOf(b), i); this.index.set(this.keyOf(a), j);
  }
  private up(i: number): boolean {
    const start = i;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(this.items[i]!, this.items[p]!)) break;
      this.swap(i, p); i = p;
    }
    return i !== start;
  }
  private down(i: number): void {
    const n = this.items.length;
    for (;;) {
      const l = 2 * i + 1; const r = l + 1;
      let m = i;
      if (l < n && this.less(this.items[l]!, this.items[m]!)) m = l;
      if (r < n && this.less(this.items[r]!, this.items[m]!)) m = r;
      if (m === i) return;
      this.swap(i, m); i = m;
    }
  }
}
