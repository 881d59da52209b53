/**
 * Every error the apiserver answers is a metav1.Status with Content-Type application/json
 * (client-go picks its decoder from the content type and matches errors on `reason`).
 */
import { ApiError, type ApiStatus } from '@mk8s/api';
import type { FastifyReply } from 'fastify';

export const JSON_CONTENT_TYPE = 'application/json';

/** Maps fastify's own errors (FST_ERR_*) and anything else thrown to an ApiError. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const e = err as { code?: string; statusCode?: number; message?: string };
  switch (e.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('RequestEntityTooLarge', `Request entity too large: limit is ${MAX_REQUEST_BODY_BYTES}`);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError('UnsupportedMediaType', e.message ?? 'unsupported media type');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new ApiError('BadRequest', e.message ?? 'bad request');
  }
  if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    return new ApiError(e.statusCode === 404 ? 'NotFound' : e.statusCode === 405 ? 'MethodNotAllowed' : 'BadRequest',
      e.message ?? 'bad request', { code: e.statusCode });
  }
  if (e.statusCode === 503) return new ApiError('ServiceUnavailable', e.message ?? 'the server is shutting down');
  return new ApiError('InternalError', `Internal error occurred: ${e.message ?? String(err)}`);
}

/** Sends err as a Status (for non-hijacked replies). */
export function sendError(reply: FastifyReply, err: unknown): FastifyReply {
  const apiErr = toApiError(err);
  const status: ApiStatus = apiErr.toStatus();
  if (apiErr.reason === 'TooManyRequests' && apiErr.details?.retryAfterSeconds !== undefined) {
    void reply.header('retry-after', String(apiErr.details.retryAfterSeconds));
  }
  return reply.code(apiErr.code).type(JSON_CONTENT_TYPE).send(status);
}

/** The Status a successful delete or subresource POST answers when no object is returned. */
export function successStatus(details?: Record<string, unknown>): ApiStatus {
  const s: ApiStatus = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success' };
  if (details) s.details = details;
  return s;
}

/** Upstream's limit for a request body (apiserver MaxRequestBodyBytes). */
export const MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024;

/** Upstream's generic 404 for URLs that name nothing. */
export const notFoundError = () => new ApiError('NotFound', 'the server could not find the requested resource', { details: {} });

export const methodNotAllowedError = () =>
  new ApiError('MethodNotAllowed', 'the server does not allow this method on the requested resource', { details: {} });
