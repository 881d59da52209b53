/**
 * Query parameters as upstream's parameter codec reads them (apimachinery runtime/conversion.go
 * Convert_Slice_string_To_bool), shared by the apiserver and the kubelet's server so that every
 * boolean parameter (watch, follow, timestamps, previous, stdin/stdout/stderr/tty, force,
 * allowWatchBookmarks, orphanDependents, ...) reads the same for every client.
 *
 * Upstream is lenient, not strconv.ParseBool: an absent parameter is false (or the caller's
 * default), "false" and "0" in any letter case are false, and every other value, "" included, is
 * true. So the Python client's `watch=True`, client-node's `follow=true`, curl's `?watch` and
 * kubectl's `stdin=true` all mean true, and no value is an error.
 */

/** A query parameter value as fastify (string | string[]) or URLSearchParams (string | null) give it. */
export type QueryValue = string | readonly string[] | null | undefined;

/**
 * queryBool reads a boolean query parameter the way upstream's parameter codec does; the first
 * value counts when the parameter is repeated. `absent` is returned when it is not given.
 */
export function queryBool(value: QueryValue, absent = false): boolean {
  const v = typeof value === 'string' ? value : value?.[0];
  if (v === undefined || v === null) return absent;
  const lower = v.toLowerCase();
  return lower !== 'false' && lower !== '0';
}
