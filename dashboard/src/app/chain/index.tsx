/**
 * What the shell mounts at #/chain/<kind>/<namespace>/<name>: the chain view (chain-view.tsx)
 * wired to the shell's apiFetch — GETs and watches through the dashboard's /api proxy with the
 * user's token — and to its Forbidden / Unauthorized panel.
 */
import { useMemo } from 'preact/hooks';
import { TRACE_KINDS } from '@mk8s/api/trace';
import { ApiError, apiJson, errorOf, streamLines, type ApiFetch } from '../api';
import { Problem } from '../components';
import { ChainView as View } from './chain-view';
import type { ApiGet, ApiWatch, ChainWatchEvent } from './live-chain';
import { traceKindOf } from './model';
import './chain.css';

export interface ChainViewProps { kind: string; namespace: string; name: string; api: ApiFetch }

/** GET path → JSON; rejects with the shell's ApiError (code, reason) on a non-2xx answer. */
export const apiGetOf = (api: ApiFetch): ApiGet => (path) => apiJson<unknown>(api, path);

/** A watch of path from resourceVersion (bookmarks on), one parsed event per line. */
export function apiWatchOf(api: ApiFetch): ApiWatch {
  return async function* watch(path: string, resourceVersion: string, signal: AbortSignal): AsyncGenerator<ChainWatchEvent> {
    const q = new URLSearchParams({ watch: '1', allowWatchBookmarks: 'true', ...(resourceVersion ? { resourceVersion } : {}) });
    const res = await api(`${path}${path.includes('?') ? '&' : '?'}${q.toString()}`, { signal });
    if (!res.ok) throw await errorOf(res);
    for await (const line of streamLines(res)) if (line.trim()) yield JSON.parse(line) as ChainWatchEvent;
  };
}

export function ChainView({ kind, namespace, name, api }: ChainViewProps) {
  const get = useMemo(() => apiGetOf(api), [api]);
  const watch = useMemo(() => apiWatchOf(api), [api]);
  const traceKind = TRACE_KINDS.find((k) => k === traceKindOf(kind));
  if (!traceKind) {
    return (
      <section class="chain" data-testid="chain" data-verdict="unsupported">
        <h1>Chain of {kind} {namespace ? `${namespace}/` : ''}{name}</h1>
        <p class="problem" role="alert">The chain follows {TRACE_KINDS.join(', ')}; not {kind}.</p>
      </section>
    );
  }
  return (
    <View kind={traceKind} namespace={namespace || 'default'} name={name} get={get} watch={watch}
      renderError={(err, what) => (err instanceof ApiError ? <Problem error={err} what={what} /> : <div class="problem" role="alert">{String(err)}</div>)} />
  );
}
