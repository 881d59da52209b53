/**
 * API errors as metav1.Status (apimachinery pkg/api/errors). The apiserver throws these and
 * serializes them; the client rebuilds them from a response. Test with isNotFound(err) etc.,
 * never by message text.
 */
import type { ApiStatus, StatusCause } from './types.js';

export type StatusReason =
  | 'NotFound' | 'AlreadyExists' | 'Conflict' | 'Invalid' | 'BadRequest' | 'Unauthorized'
  | 'Forbidden' | 'MethodNotAllowed' | 'NotAcceptable' | 'UnsupportedMediaType' | 'Gone' | 'Expired'
  | 'RequestEntityTooLarge' | 'TooManyRequests' | 'InternalError' | 'ServiceUnavailable' | 'Timeout';

const CODES: Record<StatusReason, number> = {
  NotFound: 404, AlreadyExists: 409, Conflict: 409, Invalid: 422, BadRequest: 400, Unauthorized: 401,
  Forbidden: 403, MethodNotAllowed: 405, NotAcceptable: 406, UnsupportedMediaType: 415, Gone: 410,
  Expired: 410, RequestEntityTooLarge: 413, TooManyRequests: 429, InternalError: 500,
  ServiceUnavailable: 503, Timeout: 504,
};

export interface ErrorDetails { name?: string; group?: string; kind?: string; uid?: string; causes?: StatusCause[]; retryAfterSeconds?: number }

/** An error that carries a Kubernetes Status. */
export class ApiError extends Error {
  readonly reason: StatusReason | string;
  readonly code: number;
  readonly details: ErrorDetails | undefined;
  constructor(reason: StatusReason | string, message: string, opts: { code?: number; details?: ErrorDetails } = {}) {
    super(message);
    this.name = 'ApiError';
    this.reason = reason;
    this.code = opts.code ?? CODES[reason as StatusReason] ?? 500;
    this.details = opts.details;
  }
  /** The metav1.Status body for this error. */
  toStatus(): ApiStatus {
    const s: ApiStatus = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: this.message, reason: this.reason, code: this.code };
    if (this.details) s.details = this.details;
    return s;
  }
  /** Rebuilds an ApiError from a Status body (client side); falls back to the HTTP code. */
  static fromStatus(status: Partial<ApiStatus> | undefined, httpCode: number, fallbackMessage = ''): ApiError {
    const reason = status?.reason || reasonForCode(httpCode);
    const opts: { code: number; details?: ErrorDetails } = { code: status?.code ?? httpCode };
    if (status?.details) opts.details = status.details as ErrorDetails;
    return new ApiError(reason, status?.message || fallbackMessage || `the server responded with status ${httpCode}`, opts);
  }
}

/** Thrown by a reconcile that should not be retried. */
export class TerminalError extends Error {
  constructor(message: string, opts?: { cause?: unknown }) { super(message, opts); this.name = 'TerminalError'; }
}

function reasonForCode(code: number): string {
  for (const [reason, c] of Object.entries(CODES)) if (c === code && reason !== 'Expired' && reason !== 'AlreadyExists') return reason;
  return code >= 500 ? 'InternalError' : 'BadRequest';
}

const reasonOf = (err: unknown): string | undefined => (err instanceof ApiError ? err.reason : undefined);
const codeOf = (err: unknown): number | undefined => (err instanceof ApiError ? err.code : undefined);

export const isNotFound = (e: unknown) => reasonOf(e) === 'NotFound' || (reasonOf(e) === undefined && codeOf(e) === 404);
export const isAlreadyExists = (e: unknown) => reasonOf(e) === 'AlreadyExists';
export const isConflict = (e: unknown) => reasonOf(e) === 'Conflict';
export const isInvalid = (e: unknown) => reasonOf(e) === 'Invalid';
export const isForbidden = (e: unknown) => reasonOf(e) === 'Forbidden';
export const isUnauthorized = (e: unknown) => reasonOf(e) === 'Unauthorized';
export const isBadRequest = (e: unknown) => reasonOf(e) === 'BadRequest';
/** 410: a compacted resourceVersion (reason Expired) or Gone. */
export const isResourceExpired = (e: unknown) => reasonOf(e) === 'Expired' || reasonOf(e) === 'Gone';

/** Helpers that build errors with upstream's messages; `resource` is the qualified plural (pods, deployments.apps). */
export const errors = {
  notFound: (resource: string, name: string) =>
    new ApiError('NotFound', `${resource} "${name}" not found`, { details: detailsOf(resource, name) }),
  alreadyExists: (resource: string, name: string) =>
    new ApiError('AlreadyExists', `${resource} "${name}" already exists`, { details: detailsOf(resource, name) }),
  conflict: (resource: string, name: string, why = 'the object has been modified; please apply your changes to the latest version and try again') =>
    new ApiError('Conflict', `Operation cannot be fulfilled on ${resource} "${name}": ${why}`, { details: detailsOf(resource, name) }),
  /** kind is the Kind (Deployment), as upstream's Invalid message uses it. */
  invalid: (kind: string, group: string, name: string, causes: StatusCause[]) =>
    new ApiError('Invalid', `${kind}${group ? '.' + group : ''} "${name}" is invalid: ${causes.map((c) => c.message).join(', ')}`,
      { details: { name, group, kind, causes } }),
  badRequest: (message: string) => new ApiError('BadRequest', message),
  expired: (message: string) => new ApiError('Expired', message),
  internal: (message: string) => new ApiError('InternalError', `Internal error occurred: ${message}`),
};

function detailsOf(resource: string, name: string): ErrorDetails {
  const dot = resource.indexOf('.');
  return dot < 0 ? { name, kind: resource } : { name, kind: resource.slice(0, dot), group: resource.slice(dot + 1) };
}
