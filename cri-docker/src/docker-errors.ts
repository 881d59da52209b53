import { CriError, type CriErrorCode } from '@mk8s/proto';

/** Fields dockerode puts on its errors. */
interface DockerodeError { statusCode?: number; json?: { message?: string } | null; reason?: string; message?: string; code?: string }

/** dockerStatus returns the HTTP status of a dockerode error (undefined for transport errors). */
export const dockerStatus = (err: unknown): number | undefined => (err as DockerodeError | undefined)?.statusCode;

/** dockerMessage returns Docker's own error message when there is one. */
export function dockerMessage(err: unknown): string {
  const e = err as DockerodeError | undefined;
  return e?.json?.message ?? e?.message ?? String(err);
}

/**
 * toCriError maps a dockerode error to a CriError: 404 NotFound, 409 FailedPrecondition, an
 * unreachable daemon Unavailable, anything else Internal. `what` names the object for the message.
 */
export function toCriError(err: unknown, what: string): CriError {
  if (err instanceof CriError) return err;
  const status = dockerStatus(err);
  const code = (err as DockerodeError | undefined)?.code;
  let c: CriErrorCode = 'Internal';
  if (status === 404) c = 'NotFound';
  else if (status === 409) c = 'FailedPrecondition';
  else if (status === undefined && (code === 'ECONNREFUSED' || code === 'ENOENT' || code === 'EACCES')) c = 'Unavailable';
  return new CriError(c, `${what}: ${dockerMessage(err)}`, { cause: err });
}
