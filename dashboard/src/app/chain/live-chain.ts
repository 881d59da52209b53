/**
 * A chain that follows the cluster: gathers the target's objects with `@mk8s/api/trace`, watches
 * the collections they came from (the most telling few: a browser gives one origin only six
 * HTTP/1.1 connections) and re-gathers on their events, throttled, plus a slow resync for the
 * collections it does not watch. Pure of the DOM: get, watch and the clock are injected.
 */
import { gatherTrace, targetSource, traceLinks, type ApiGet, type Link, type TraceGathered, type TraceTarget } from '@mk8s/api/trace';

export type { ApiGet } from '@mk8s/api/trace';

/** One event of a watch stream, as the apiserver sends it. */
export interface ChainWatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR' | string;
  object: { metadata?: { resourceVersion?: string }; code?: number };
}

/**
 * Streams the watch of a collection path (which may carry a query) from resourceVersion ('' for
 * "now", which starts with an ADDED per existing object) until the stream ends or signal aborts.
 * May reject (network, non-2xx); the caller reopens.
 */
export type ApiWatch = (path: string, resourceVersion: string, signal: AbortSignal) => AsyncIterable<ChainWatchEvent>;

/** The clock the throttle runs on (component-base's Clock shape; FakeClock in tests). */
export interface ChainClock {
  now(): number;
  /** Calls fn after ms; returns a cancel function. */
  setTimeout(fn: () => void, ms: number): () => void;
}

export const browserClock: ChainClock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => { const t = setTimeout(fn, ms); return () => clearTimeout(t); },
};

export interface ChainState {
  gathered: TraceGathered | undefined;
  links: Link[] | undefined;
  /** The last gather's failure (NotFound, Forbidden, network); the last good links stay shown. */
  error: unknown;
  /** clock.now() of the last gather that finished, and how many have. */
  updatedAt: number | undefined;
  gathers: number;
  /** The collections being watched. */
  watching: string[];
}

export interface LiveChainOptions {
  get: ApiGet;
  watch: ApiWatch;
  target: TraceTarget;
  onChange: (s: ChainState) => void;
  clock?: ChainClock;
  /**
   * Adds view-specific inputs before the walk (kube-proxy's rules, or why they are not read);
   * called once per gather, awaited before the links are walked and onChange runs. A rejection
   * is that gather's error, like a failed read.
   */
  decorate?: (g: TraceGathered) => void | Promise<void>;
  /** Least time between two gathers' starts. @default 400 */
  throttleMs?: number;
  /** A re-gather this often even without events (the collections not watched). @default 10000 */
  resyncMs?: number;
  /** Most watch streams open at once. @default 4 */
  maxWatches?: number;
  /** Wait before reopening a watch that failed or ended at once. @default 1000 */
  retryMs?: number;
}

/** Which collections tell most about a chain, first: the target, its pods, the Events, the endpoints. */
const PRIORITY = ['pods', 'events', 'endpointslices', 'replicasets', 'jobs', 'services', 'nodes', 'persistentvolumeclaims'];
const resourceOf = (path: string) => /\/([a-z]+)(?:\?|$)/.exec(path)?.[1] ?? '';

/** The sources to watch: the target's own first, then by PRIORITY, at most max. */
export function watchPlan(sources: readonly string[], max: number): string[] {
  const [self, ...rest] = sources;
  const rank = (p: string) => { const i = PRIORITY.indexOf(resourceOf(p)); return i < 0 ? PRIORITY.length : i; };
  const ordered = [...rest].sort((a, b) => rank(a) - rank(b));
  return (self === undefined ? ordered : [self, ...ordered]).slice(0, Math.max(0, max));
}

export class LiveChain {
  private readonly clock: ChainClock;
  private state: ChainState = { gathered: undefined, links: undefined, error: undefined, updatedAt: undefined, gathers: 0, watching: [] };
  /** resourceVersion of each list (and of the target) as the last gather read it. */
  private readonly listRv = new Map<string, string>();
  /** resourceVersion each open watch has reached. */
  private readonly watchRv = new Map<string, string>();
  private readonly watches = new Map<string, AbortController>();
  private dirty = false;
  private running = false;
  private lastStart = Number.NEGATIVE_INFINITY;
  private cancelTimer: (() => void) | undefined;
  private gathered: (() => void)[] = [];
  private signal: AbortSignal | undefined;

  constructor(private readonly o: LiveChainOptions) { this.clock = o.clock ?? browserClock; }

  current(): ChainState { return this.state; }

  /** Gathers now and follows the cluster until signal aborts; resolves then. Never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    this.signal = signal;
    const resync = () => {
      if (signal.aborted) return;
      this.poke();
      const cancel = this.clock.setTimeout(resync, this.o.resyncMs ?? 10_000);
      signal.addEventListener('abort', cancel, { once: true });
    };
    resync();
    await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    this.cancelTimer?.();
    for (const ac of this.watches.values()) ac.abort();
    this.watches.clear();
    for (const w of this.gathered.splice(0)) w();
  }

  /** Something changed: gather again, at most once per throttleMs. */
  poke(): void {
    this.dirty = true;
    this.kick();
  }

  private kick(): void {
    if (this.running || this.cancelTimer || this.signal?.aborted) return;
    const wait = Math.max(0, this.lastStart + (this.o.throttleMs ?? 400) - this.clock.now());
    if (wait === 0) { void this.gatherOnce(); return; }
    this.cancelTimer = this.clock.setTimeout(() => { this.cancelTimer = undefined; void this.gatherOnce(); }, wait);
  }

  private async gatherOnce(): Promise<void> {
    if (!this.dirty || this.signal?.aborted) return;
    this.dirty = false;
    this.running = true;
    this.lastStart = this.clock.now();
    const { target } = this.o;
    const objectPathSeen: { rv?: string } = {};
    const get: ApiGet = async (path) => {
      const body = await this.o.get(path) as { items?: unknown; metadata?: { resourceVersion?: string } } | null;
      const rv = body?.metadata?.resourceVersion;
      if (rv && Array.isArray(body?.items)) this.listRv.set(path, rv);
      else if (rv && objectPathSeen.rv === undefined) objectPathSeen.rv = rv;   // the target's own GET comes first
      return body;
    };
    try {
      const g = await gatherTrace(get, target);
      if (objectPathSeen.rv) this.listRv.set(g.sources[0]!, objectPathSeen.rv);
      await this.o.decorate?.(g);
      this.state = { ...this.state, gathered: g, links: traceLinks(g), error: undefined };
      this.ensureWatches(watchPlan(g.sources, this.o.maxWatches ?? 4));
    } catch (err) {
      this.state = { ...this.state, error: err };
      // Gone or not there yet: watch the target alone, to see it (re)appear.
      this.ensureWatches([targetSource(target)]);
    } finally {
      this.running = false;
      this.state = { ...this.state, updatedAt: this.clock.now(), gathers: this.state.gathers + 1, watching: [...this.watches.keys()] };
      for (const w of this.gathered.splice(0)) w();
      if (!this.signal?.aborted) this.o.onChange(this.state);
      if (this.dirty) this.kick();
    }
  }

  private ensureWatches(paths: string[]): void {
    const signal = this.signal;
    if (!signal || signal.aborted) return;
    for (const [p, ac] of this.watches) if (!paths.includes(p)) { ac.abort(); this.watches.delete(p); this.watchRv.delete(p); }
    for (const p of paths) {
      if (this.watches.has(p)) continue;
      const ac = new AbortController();
      signal.addEventListener('abort', () => ac.abort(), { once: true });
      this.watches.set(p, ac);
      void this.follow(p, ac.signal);
    }
  }

  private nextGather(): Promise<void> { return new Promise((resolve) => this.gathered.push(resolve)); }

  private sleep(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const cancel = this.clock.setTimeout(resolve, ms);
      signal.addEventListener('abort', () => { cancel(); resolve(); }, { once: true });
    });
  }

  /** Watches one collection until signal aborts, reopening from the last resourceVersion seen. */
  private async follow(path: string, signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      const rv = this.watchRv.get(path) ?? this.listRv.get(path) ?? '';
      let events = 0;
      let gone = false;
      try {
        for await (const ev of this.o.watch(path, rv, signal)) {
          if (ev.type === 'ERROR') { gone = ev.object.code === 410; break; }
          events++;
          const next = ev.object.metadata?.resourceVersion;
          if (next) this.watchRv.set(path, next);
          if (ev.type !== 'BOOKMARK') this.poke();
        }
      } catch { /* reopened below */ }
      if (signal.aborted) return;
      if (gone) {
        // Compacted: a fresh gather reads a resourceVersion to resume from.
        this.watchRv.delete(path);
        this.listRv.delete(path);
        const done = this.nextGather();
        this.poke();
        await done;
        continue;
      }
      if (events === 0) await this.sleep(this.o.retryMs ?? 1_000, signal);
    }
  }
}
