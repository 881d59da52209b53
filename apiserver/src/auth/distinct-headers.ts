/**
 * A request's headers with every value kept apart, for the authenticators that read repeated
 * headers (X-Remote-Group, Impersonate-Group, ...) as upstream's Header.Values does.
 */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';

/** Header name (lower case) → its values. */
export type DistinctHeaders = Readonly<Record<string, readonly string[] | undefined>>;

/**
 * req.headersDistinct when the request has it; else req.headers with each value as a list. Not
 * every request object has headersDistinct: fastify's inject (light-my-request), the HTTP/2
 * compatibility API and hand-made requests (TokenReview's) do not, and there a repeated header
 * stays as Node joined it. Never throws; pure.
 */
export function distinctHeaders(req: Pick<IncomingMessage, 'headers'> | { headers?: IncomingHttpHeaders; headersDistinct?: unknown } | undefined): DistinctHeaders {
  const distinct = (req as { headersDistinct?: unknown } | undefined)?.headersDistinct;
  if (distinct && typeof distinct === 'object') return distinct as DistinctHeaders;
  const out: Record<string, string[]> = {};
  for (const [name, v] of Object.entries(req?.headers ?? {})) {
    if (v === undefined) continue;
    out[name.toLowerCase()] = Array.isArray(v) ? v.map(String) : [String(v)];
  }
  return out;
}
