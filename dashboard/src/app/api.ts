/**
 * How the app talks to the cluster: every call goes to the dashboard's own /api and /apis proxy
 * with the user's bearer token in the Authorization header (never a cookie) and the CSRF header.
 * The token lives in sessionStorage (this tab only, gone when it closes).
 */

/** fetch for API paths ('/api/v1/pods', '/apis/apps/v1/...'): adds the credentials. */
export type ApiFetch = (path: string, init?: RequestInit) => Promise<Response>;

export const TOKEN_KEY = 'mk8s-dashboard-token';
export const CSRF_HEADER = 'X-Mk8s-Dashboard';
/** Accept header asking the apiserver for its Table rendering (kubectl's columns), JSON as fallback. */
export const TABLE_ACCEPT = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';

/**
 * The login fragment `mkctl dashboard --url` makes: #token=…[&next=/route]. Moves the token to
 * storage and returns the route to show; the caller replaces the URL so the token leaves the
 * address bar and the history at once. undefined when the fragment is a plain route.
 */
export function takeLoginFragment(hash: string, storage: Pick<Storage, 'setItem'>): string | undefined {
  if (!hash.startsWith('#token=')) return undefined;
  const f = new URLSearchParams(hash.slice(1));
  const token = f.get('token');
  if (token) storage.setItem(TOKEN_KEY, token);
  const next = f.get('next');
  return next && next.startsWith('/') ? next : '/cluster';
}

export function currentToken(): string | null { return sessionStorage.getItem(TOKEN_KEY); }
export function setToken(t: string | null): void { if (t) sessionStorage.setItem(TOKEN_KEY, t); else sessionStorage.removeItem(TOKEN_KEY); }

export const apiFetch: ApiFetch = (path, init = {}) => {
  const headers = new Headers(init.headers);
  const token = currentToken();
  if (token) headers.set('Authorization', `Bearer ${token}`);
  headers.set(CSRF_HEADER, '1');
  if (!headers.has('Accept')) headers.set('Accept', 'application/json');
  return fetch(path, { ...init, headers, credentials: 'omit', cache: 'no-store' });
};

/** A failed API call, from the metav1.Status the apiserver (or the dashboard) answered. */
export class ApiError extends Error {
  constructor(readonly code: number, readonly reason: string, message: string) { super(message); }
}

export async function errorOf(res: Response): Promise<ApiError> {
  const text = await res.text().catch(() => '');
  try {
    const s = JSON.parse(text) as { kind?: string; reason?: string; message?: string; code?: number };
    if (s.kind === 'Status') return new ApiError(s.code ?? res.status, s.reason ?? res.statusText, s.message ?? text);
  } catch { /* not JSON */ }
  return new ApiError(res.status, res.status === 403 ? 'Forbidden' : res.status === 401 ? 'Unauthorized' : res.statusText, text || res.statusText);
}

/** GET/POST/... returning parsed JSON; throws ApiError on a non-2xx answer. */
export async function apiJson<T>(api: ApiFetch, path: string, init?: RequestInit): Promise<T> {
  const res = await api(path, init);
  if (!res.ok) throw await errorOf(res);
  return await res.json() as T;
}

/** The lines of a streaming response body (watch events, followed logs), as they arrive. */
export async function* streamLines(res: Response): AsyncGenerator<string> {
  if (!res.body) return;
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += value;
    let i;
    while ((i = buf.indexOf('\n')) >= 0) { yield buf.slice(0, i); buf = buf.slice(i + 1); }
  }
  if (buf) yield buf;
}

// ---- minimal API shapes the app reads ----------------------------------------------------------

export interface ObjectMeta {
  name: string; namespace?: string; uid?: string; resourceVersion?: string; creationTimestamp?: string;
  labels?: Record<string, string>; annotations?: Record<string, string>; deletionTimestamp?: string;
  ownerReferences?: { kind: string; name: string; controller?: boolean }[]; managedFields?: unknown;
}
export interface KubeObject { apiVersion?: string; kind?: string; metadata: ObjectMeta; [k: string]: unknown }
export interface TableColumn { name: string; type: string; format: string; priority: number }
export interface TableRow { cells: unknown[]; object?: { metadata: ObjectMeta } }
export interface Table { kind: 'Table'; columnDefinitions: TableColumn[]; rows: TableRow[]; metadata: { resourceVersion?: string } }
export interface WatchEvent<T> { type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR'; object: T }
