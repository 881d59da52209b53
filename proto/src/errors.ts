/**
 * CriError carries a gRPC status code by name. Runtimes throw it; the server adapters turn it into
 * a gRPC status and `RemoteRuntimeService` turns the status back into a CriError, so callers test
 * `isNotFound(err)` the same way against the fake, the shim in-process, or the shim over a socket.
 */
import { status as GrpcStatus } from '@grpc/grpc-js';

export type CriErrorCode =
  | 'Canceled' | 'Unknown' | 'InvalidArgument' | 'DeadlineExceeded' | 'NotFound' | 'AlreadyExists'
  | 'PermissionDenied' | 'ResourceExhausted' | 'FailedPrecondition' | 'Aborted' | 'OutOfRange'
  | 'Unimplemented' | 'Internal' | 'Unavailable' | 'DataLoss' | 'Unauthenticated';

const TO_GRPC: Record<CriErrorCode, GrpcStatus> = {
  Canceled: GrpcStatus.CANCELLED,
  Unknown: GrpcStatus.UNKNOWN,
  InvalidArgument: GrpcStatus.INVALID_ARGUMENT,
  DeadlineExceeded: GrpcStatus.DEADLINE_EXCEEDED,
  NotFound: GrpcStatus.NOT_FOUND,
  AlreadyExists: GrpcStatus.ALREADY_EXISTS,
  PermissionDenied: GrpcStatus.PERMISSION_DENIED,
  ResourceExhausted: GrpcStatus.RESOURCE_EXHAUSTED,
  FailedPrecondition: GrpcStatus.FAILED_PRECONDITION,
  Aborted: GrpcStatus.ABORTED,
  OutOfRange: GrpcStatus.OUT_OF_RANGE,
  Unimplemented: GrpcStatus.UNIMPLEMENTED,
  Internal: GrpcStatus.INTERNAL,
  Unavailable: GrpcStatus.UNAVAILABLE,
  DataLoss: GrpcStatus.DATA_LOSS,
  Unauthenticated: GrpcStatus.UNAUTHENTICATED,
};

/** An error with a gRPC status code (by name). */
export class CriError extends Error {
  readonly code: CriErrorCode;
  constructor(code: CriErrorCode, message: string, opts?: { cause?: unknown }) {
    super(message, opts);
    this.name = 'CriError';
    this.code = code;
  }
  /** The numeric gRPC status code. */
  get grpcCode(): GrpcStatus { return TO_GRPC[this.code]; }
}

/** criCodeFromGrpc maps a numeric gRPC status to its CriErrorCode ('Unknown' when unmapped). */
export function criCodeFromGrpc(code: number): CriErrorCode {
  for (const [name, c] of Object.entries(TO_GRPC)) if (c === code) return name as CriErrorCode;
  return 'Unknown';
}

/** criErrorCode returns err's code when it is a CriError. */
export const criErrorCode = (err: unknown): CriErrorCode | undefined => (err instanceof CriError ? err.code : undefined);
export const isNotFound = (err: unknown): boolean => criErrorCode(err) === 'NotFound';
export const isFailedPrecondition = (err: unknown): boolean => criErrorCode(err) === 'FailedPrecondition';
export const isDeadlineExceeded = (err: unknown): boolean => criErrorCode(err) === 'DeadlineExceeded';
export const isUnavailable = (err: unknown): boolean => criErrorCode(err) === 'Unavailable';
export const isInvalidArgument = (err: unknown): boolean => criErrorCode(err) === 'InvalidArgument';
