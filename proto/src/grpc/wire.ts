/**
 * Conversions between the generated wire shapes and ./types.ts. Decoded messages carry `null`
 * for absent sub-messages (proto-loader `defaults`); `denull` drops those keys so the result
 * fits our optional fields. Filters use wrapper messages on the wire and plain values in types.
 */
import { CriError, criCodeFromGrpc } from '../errors.js';
import type * as grpc from '@grpc/grpc-js';
import type { ContainerFilter, ContainerState, ContainerStatsFilter, PodSandboxFilter, PodSandboxState, PodSandboxStatsFilter } from '../types.js';
import type { PodSandboxStatsFilter__Output } from '../generated/runtime/v1/PodSandboxStatsFilter.js';
import type { PodSandboxFilter__Output, PodSandboxFilter as WirePodSandboxFilter } from '../generated/runtime/v1/PodSandboxFilter.js';
import type { ContainerFilter__Output, ContainerFilter as WireContainerFilter } from '../generated/runtime/v1/ContainerFilter.js';
import type { ContainerStatsFilter__Output } from '../generated/runtime/v1/ContainerStatsFilter.js';
import { status as GrpcStatus } from '@grpc/grpc-js';

/** denull returns a deep copy of v without null-valued keys and without oneof marker keys. */
export function denull<T>(v: unknown): T {
  if (v === null || v === undefined) return undefined as T;
  if (Buffer.isBuffer(v) || typeof v !== 'object') return v as T;
  if (Array.isArray(v)) return v.map((x) => denull(x)) as T;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) if (x !== null && x !== undefined) out[k] = denull(x);
  return out as T;
}

export function podSandboxFilterToWire(f: PodSandboxFilter | undefined): WirePodSandboxFilter | null {
  if (!f) return null;
  return { id: f.id ?? '', state: f.state ? { state: f.state } : null, labelSelector: f.labelSelector ?? {} };
}
export function podSandboxFilterFromWire(f: PodSandboxFilter__Output | null): PodSandboxFilter | undefined {
  if (!f) return undefined;
  const out: PodSandboxFilter = {};
  if (f.id) out.id = f.id;
  if (f.state) out.state = f.state.state as PodSandboxState;
  if (Object.keys(f.labelSelector).length) out.labelSelector = f.labelSelector;
  return out;
}
export function containerFilterToWire(f: ContainerFilter | undefined): WireContainerFilter | null {
  if (!f) return null;
  return { id: f.id ?? '', podSandboxId: f.podSandboxId ?? '', state: f.state ? { state: f.state } : null, labelSelector: f.labelSelector ?? {} };
}
export function containerFilterFromWire(f: ContainerFilter__Output | null): ContainerFilter | undefined {
  if (!f) return undefined;
  const out: ContainerFilter = {};
  if (f.id) out.id = f.id;
  if (f.podSandboxId) out.podSandboxId = f.podSandboxId;
  if (f.state) out.state = f.state.state as ContainerState;
  if (Object.keys(f.labelSelector).length) out.labelSelector = f.labelSelector;
  return out;
}
export function podSandboxStatsFilterFromWire(f: PodSandboxStatsFilter__Output | null): PodSandboxStatsFilter | undefined {
  if (!f) return undefined;
  const out: PodSandboxStatsFilter = {};
  if (f.id) out.id = f.id;
  if (Object.keys(f.labelSelector).length) out.labelSelector = f.labelSelector;
  return out;
}

export function containerStatsFilterFromWire(f: ContainerStatsFilter__Output | null): ContainerStatsFilter | undefined {
  if (!f) return undefined;
  const out: ContainerStatsFilter = {};
  if (f.id) out.id = f.id;
  if (f.podSandboxId) out.podSandboxId = f.podSandboxId;
  if (Object.keys(f.labelSelector).length) out.labelSelector = f.labelSelector;
  return out;
}

/** toGrpcError turns anything thrown by a runtime into a gRPC status (non-CriErrors are INTERNAL). */
export function toGrpcError(err: unknown): Partial<grpc.StatusObject> {
  if (err instanceof CriError) return { code: err.grpcCode, details: err.message };
  return { code: GrpcStatus.INTERNAL, details: err instanceof Error ? err.message : String(err) };
}

/** fromGrpcError turns a client-side gRPC error back into a CriError. */
export function fromGrpcError(err: unknown): CriError {
  if (err instanceof CriError) return err;
  const e = err as Partial<grpc.ServiceError>;
  if (typeof e.code === 'number') return new CriError(criCodeFromGrpc(e.code), e.details || e.message || 'unknown error', { cause: err });
  return new CriError('Unknown', err instanceof Error ? err.message : String(err), { cause: err });
}
