/**
 * Live collections: list, then watch from the list's resourceVersion (client-go's reflector).
 * A watch that ends is resumed from the last resourceVersion seen; a 410 Gone (compacted) answers
 * with a relist. Objects or, with `table`, the apiserver's Table rows (kubectl's columns, one
 * printing code for both), keyed "namespace/name".
 */
import { ApiError, TABLE_ACCEPT, errorOf, streamLines, type ApiFetch, type KubeObject, type ObjectMeta, type Table, type TableColumn, type TableRow, type WatchEvent } from './api';

export interface LiveState<T> {
  items: ReadonlyMap<string, T>;
  /** Table mode: the columns of the first list. */
  columns: readonly TableColumn[];
  /** Set while the last list failed (403 Forbidden stays until rights change). */
  error: ApiError | undefined;
  synced: boolean;
  /** Bumped on every change (for memoization). */
  version: number;
}

export interface ListWatchOptions {
  /** A collection path: /api/v1/pods, /apis/apps/v1/namespaces/ns/deployments. */
  path: string;
  table?: boolean;
  /** Extra query (labelSelector, fieldSelector). */
  query?: Record<string, string>;
  /** Delay before retrying after an error. @default 1000 */
  retryMs?: number;
}

const keyOf = (m: ObjectMeta | undefined): string => (m?.namespace ? `${m.namespace}/${m.name}` : m?.name ?? '');

export class ListWatch<T extends KubeObject | TableRow> {
  private items = new Map<string, T>();
  private columns: TableColumn[] = [];
  private error: ApiError | undefined;
  private synced = false;
  private version = 0;

  constructor(private readonly api: ApiFetch, private readonly o: ListWatchOptions, private readonly changed: () => void) {}

  state(): LiveState<T> {
    return { items: this.items, columns: this.columns, error: this.error, synced: this.synced, version: this.version };
  }

  private bump(): void { this.version++; this.changed(); }

  private url(extra: Record<string, string>): string {
    const q = new URLSearchParams({ ...(this.o.query ?? {}), ...extra });
    return `${this.o.path}?${q.toString()}`;
  }

  private headers(): HeadersInit { return { Accept: this.o.table ? TABLE_ACCEPT : 'application/json' }; }

  /** Lists and watches until signal aborts. Never throws. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      let rv: string;
      try {
        rv = await this.list(signal);
      } catch (err) {
        if (signal.aborted) return;
        this.error = err instanceof ApiError ? err : new ApiError(0, 'NetworkError', String(err));
        this.synced = false;
        this.bump();
        await sleep(err instanceof ApiError && err.code === 403 ? 5_000 : this.o.retryMs ?? 1_000, signal);
        continue;
      }
      // Watch, resuming from the last resourceVersion, until it is gone (410) or fails.
      for (;;) {
        if (signal.aborted) return;
        const r = await this.watch(rv, signal).catch(() => ({ rv, gone: false, failed: true }));
        rv = r.rv;
        if (r.gone) break;
        if (r.failed) await sleep(this.o.retryMs ?? 1_000, signal);
      }
    }
  }

  private async list(signal: AbortSignal): Promise<string> {
    const res = await this.api(this.url({}), { headers: this.headers(), signal });
    if (!res.ok) throw await errorOf(res);
    const body = await res.json() as Table | { items: T[]; metadata: { resourceVersion?: string } };
    const next = new Map<string, T>();
    if (this.o.table && 'rows' in body) {
      this.columns = body.columnDefinitions;
      for (const row of body.rows) next.set(keyOf(row.object?.metadata), row as T);
    } else if ('items' in body) {
      for (const obj of body.items) next.set(keyOf((obj as KubeObject).metadata), obj);
    }
    this.items = next;
    this.error = undefined;
    this.synced = true;
    this.bump();
    return body.metadata.resourceVersion ?? '0';
  }

  private async watch(rv: string, signal: AbortSignal): Promise<{ rv: string; gone: boolean; failed: boolean }> {
    const res = await this.api(this.url({ watch: '1', resourceVersion: rv, allowWatchBookmarks: this.o.table ? 'false' : 'true' }), { headers: this.headers(), signal });
    if (res.status === 410) return { rv, gone: true, failed: false };
    if (!res.ok) { await res.body?.cancel(); return { rv, gone: false, failed: true }; }
    for await (const line of streamLines(res)) {
      if (!line.trim()) continue;
      const ev = JSON.parse(line) as WatchEvent<unknown>;
      if (ev.type === 'ERROR') {
        const s = ev.object as { code?: number };
        return { rv, gone: s.code === 410, failed: s.code !== 410 };
      }
      const applied = this.apply(ev);
      if (applied) rv = applied;
    }
    return { rv, gone: false, failed: false };
  }

  /** Applies one event; returns its resourceVersion. */
  private apply(ev: WatchEvent<unknown>): string | undefined {
    let meta: ObjectMeta | undefined;
    let item: T | undefined;
    if (this.o.table && (ev.object as Table).kind === 'Table') {
      const row = (ev.object as Table).rows[0];
      if (!row) return undefined;
      meta = row.object?.metadata;
      item = row as T;
    } else {
      meta = (ev.object as KubeObject).metadata;
      item = ev.object as T;
    }
    if (ev.type === 'BOOKMARK') return meta?.resourceVersion;
    const key = keyOf(meta);
    if (ev.type === 'DELETED') this.items.delete(key); else this.items.set(key, item);
    this.bump();
    return meta?.resourceVersion;
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) { resolve(); return; }
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => { clearTimeout(t); resolve(); }, { once: true });
  });
}
