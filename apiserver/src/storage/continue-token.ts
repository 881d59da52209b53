/**
 * List continue tokens, as upstream's etcd3 store encodes them: base64url (no padding) of
 * `{"v":"meta.k8s.io/v1","rv":<list revision>,"start":"<next key, relative to the prefix>"}`.
 */
import { errors } from '@mk8s/api';

export interface ContinueToken { resourceVersion: number; startKey: string }

export function encodeContinue(nextKey: string, prefix: string, resourceVersion: number): string {
  const start = nextKey.startsWith(prefix) ? nextKey.slice(prefix.length) : nextKey;
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: resourceVersion, start })).toString('base64url');
}

/** Decodes a token into the absolute key to resume at; BadRequest when it is malformed. */
export function decodeContinue(token: string, prefix: string): ContinueToken {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw errors.badRequest('invalid continue token: not base64-encoded JSON');
  }
  const t = parsed as { v?: unknown; rv?: unknown; start?: unknown } | null;
  if (!t || t.v !== 'meta.k8s.io/v1') throw errors.badRequest('invalid continue token: continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
  if (typeof t.rv !== 'number' || !Number.isInteger(t.rv) || t.rv <= 0) throw errors.badRequest('invalid continue token: continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
  if (typeof t.start !== 'string' || t.start === '') throw errors.badRequest('invalid continue token: continue key is not valid: encoded start key empty');
  // Upstream rejects keys that could escape the prefix ("..", leading "/").
  if (t.start.startsWith('/') || t.start.split('/').includes('..')) throw errors.badRequest(`invalid continue token: continue key is not valid: ${JSON.stringify(t.start)}`);
  return { resourceVersion: t.rv, startKey: prefix + t.start };
}

/** Upstream's 410 for a continue token whose revision was compacted. */
export const continueExpired = () => errors.expired(
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue value from the response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.');
