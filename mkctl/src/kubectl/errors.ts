/**
 * Turns any failure into the one line kubectl would print (cmdutil.CheckErr /
 * StandardErrorMessage), never a stack trace.
 */
import { ApiError } from '@mk8s/api';
import { CliError } from './context.js';

const CONNECT_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ENOTFOUND', 'ETIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_SOCKET']);

function connectCode(err: unknown): string | undefined {
  for (let e: unknown = err, i = 0; e && i < 5; i++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && CONNECT_CODES.has(code)) return code;
    const agg = (e as { errors?: unknown[] }).errors;
    if (Array.isArray(agg)) for (const x of agg) { const c = connectCode(x); if (c) return c; }
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The message and exit code for err; `server` names the apiserver URL in connection errors. */
export function formatCliError(err: unknown, server?: string): { message: string; exitCode: number } {
  if (err instanceof CliError) return { message: err.message, exitCode: err.exitCode };
  if (connectCode(err)) return { message: `error: cannot reach the API server at ${server ?? 'the configured URL'}: is the cluster up? run make up`, exitCode: 1 };
  if (err instanceof ApiError) return { message: formatApiError(err), exitCode: 1 };
  const msg = err instanceof Error ? err.message : String(err);
  return { message: msg.startsWith('error:') ? msg : `error: ${msg}`, exitCode: 1 };
}

/** kubectl's StandardErrorMessage for a Status error. */
export function formatApiError(err: ApiError, action?: string): string {
  if (err.reason === 'Invalid' && err.details?.name !== undefined && err.details.kind) {
    const causes = err.details.causes ?? [];
    const kind = err.details.kind;
    if (causes.length === 1) return `The ${kind} "${err.details.name}" is invalid: ${causeText(causes[0]!)}`;
    if (causes.length > 1) return `The ${kind} "${err.details.name}" is invalid: \n${causes.map((c) => `* ${causeText(c)}`).join('\n')}`;
  }
  const prefix = action ? `${action}: ` : '';
  return `Error from server (${err.reason || 'InternalError'}): ${prefix}${err.message}`;
}

function causeText(c: { field?: string; message?: string; reason?: string }): string {
  return c.field ? `${c.field}: ${c.message ?? c.reason ?? ''}` : (c.message ?? c.reason ?? '');
}
