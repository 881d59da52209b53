/** Preact hooks over the live collections, the hash router and a ticking clock. */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { apiFetch, type KubeObject, type TableRow } from './api';
import { ListWatch, type ListWatchOptions, type LiveState } from './live';

const EMPTY: LiveState<never> = { items: new Map<string, never>(), columns: [], error: undefined, synced: false, version: 0 };

/**
 * A live list of objects (or Table rows): re-renders at most once per animation frame however
 * many events arrive (1,000 pods changing at once cost one render). path undefined: nothing.
 */
export function useLive<T extends KubeObject | TableRow>(o: ListWatchOptions | undefined): LiveState<T> {
  const key = o ? JSON.stringify(o) : '';
  const [state, setState] = useState<LiveState<T>>(EMPTY);
  useEffect(() => {
    if (!o) { setState(EMPTY); return; }
    const ac = new AbortController();
    let scheduled = false;
    const lw: ListWatch<T> = new ListWatch<T>(apiFetch, o, () => {
      if (scheduled) return;
      scheduled = true;
      // A timer, not requestAnimationFrame: a background tab still follows the cluster.
      setTimeout(() => { scheduled = false; if (!ac.signal.aborted) setState(lw.state()); }, 16);
    });
    setState(EMPTY);
    void lw.run(ac.signal);
    return () => ac.abort();
  }, [key]);
  return state;
}

/** Date.now(), re-rendering every periodMs (ages tick). */
export function useNow(periodMs = 1000): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), periodMs);
    return () => clearInterval(t);
  }, [periodMs]);
  return now;
}

/** The route: the location hash without '#', e.g. '/pods'. */
export function useRoute(): string {
  const [route, setRoute] = useState(routeOf(location.hash));
  useEffect(() => {
    const on = () => setRoute(routeOf(location.hash));
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return route;
}

export const routeOf = (hash: string): string => (hash.startsWith('#/') ? hash.slice(1) : '/cluster');

/** Sorted values of a live map (memoized on its version). */
export function useSorted<T>(s: LiveState<T>, cmp: (a: T, b: T) => number): T[] {
  return useMemo(() => [...s.items.values()].sort(cmp), [s.version, s.items]);
}
