/**
 * RestStrategy: everything that makes one resource different from another (upstream's
 * RESTCreateStrategy / RESTUpdateStrategy / RESTDeleteStrategy). The generic Store does the rest;
 * a resource is one strategy object, never a copy of the handlers.
 */
import type { FieldError, KubeObject, ResourceDescriptor, ServerMeta } from '@mk8s/api';
import type { UserInfo } from '../../auth/authentication.js';

/** What a strategy hook may know about the request. */
export interface StrategyContext {
  /** Server time of the request. */
  now: Date;
  user: UserInfo;
}

/** Which part of an object a write addresses ('approval': CertificateSigningRequests' /approval). */
export type UpdateTarget = 'main' | 'status' | 'finalize' | 'approval';

export interface RestStrategy {
  readonly resource: ResourceDescriptor;
  /**
   * True if status is written through /status: writes to the main resource keep the stored
   * status, and /status writes keep everything but status. @default resource.subresources has 'status'
   */
  readonly statusSubresource?: boolean;
  /** metadata.generation is 1 on create and bumped on every spec change. @default true */
  readonly tracksGeneration?: boolean;
  /** PUT of a missing object creates it. @default false */
  readonly allowCreateOnUpdate?: boolean;
  /** PUT without metadata.resourceVersion overwrites. @default true */
  readonly allowUnconditionalUpdate?: boolean;
  /** DELETE answers the deleted object rather than a Success Status. @default false */
  readonly returnDeletedObject?: boolean;
  /** Namespace-scoped names are DNS labels rather than subdomains (namespaces, services). */
  readonly nameIsDNSLabel?: boolean;

  /** Clears what users may not set on create (status, system fields). Mutates obj. */
  prepareForCreate?(obj: KubeObject, ctx: StrategyContext): void;
  /** Resets what a main-resource update may not change. Mutates next; prev is read-only. */
  prepareForUpdate?(next: KubeObject, prev: KubeObject, ctx: StrategyContext): void;
  /** Resets what a /status update may not change, after the Store kept only status. */
  prepareForStatusUpdate?(next: KubeObject, prev: KubeObject, ctx: StrategyContext): void;
  /**
   * Resets what an /approval update may not change (everything but status.conditions), after the
   * Store kept only status; called instead of prepareForStatusUpdate. Only for resources serving 'approval'.
   */
  prepareForApprovalUpdate?(next: KubeObject, prev: KubeObject, ctx: StrategyContext): void;
  /** Errors make the request fail with 422 Invalid. */
  validate?(obj: KubeObject): FieldError[];
  /** target: which subresource the update came through (status and approval validate differently). */
  validateUpdate?(next: KubeObject, prev: KubeObject, target: UpdateTarget): FieldError[];
  /**
   * Graceful deletion (pods): the grace period to apply given the requested one (undefined when
   * the client did not set one). 0 deletes at once. Absent: every delete is immediate.
   */
  gracePeriodSeconds?(obj: KubeObject, requested: number | undefined): number;
  /**
   * Custom deletion (namespaces): returns the object marked for deletion, or undefined to remove
   * it now, or 'unchanged' when it is already pending. Called with a copy of the current object. Absent: the generic finalizer/grace logic.
   */
  markForDeletion?(obj: KubeObject, ctx: StrategyContext): KubeObject | undefined | 'unchanged';
  /**
   * Reserves what the object holds outside itself (Service IPs and node ports) right before it
   * is written; prev is the stored object on update. May fill fields of obj. Returns the undo the
   * Store runs if the write does not happen. Not called for dry runs.
   */
  allocate?(obj: KubeObject, prev: KubeObject | undefined): Promise<(() => Promise<void>) | undefined>;
  /** Frees what old held and next (undefined once deleted) no longer holds. Best effort. */
  release?(old: KubeObject, next: KubeObject | undefined): Promise<void>;
  /** Whether an object an update just wrote must now be removed (last finalizer gone). */
  shouldDeleteDuringUpdate?(obj: KubeObject): boolean;
}

/** True when the object is marked for deletion and nothing holds it any more. */
export function defaultShouldDeleteDuringUpdate(obj: KubeObject): boolean {
  const m = obj.metadata;
  return !!m.deletionTimestamp && (m.finalizers ?? []).length === 0 && (m.deletionGracePeriodSeconds ?? 0) === 0;
}

/** ObjectMeta without kubernetes-types' readonly modifiers: the server owns these fields. */
export type MutableMeta = { -readonly [K in keyof ServerMeta]: ServerMeta[K] } & Record<string, unknown>;

/** The object's metadata, writable. */
export const metaOf = (obj: KubeObject): MutableMeta => obj.metadata as unknown as MutableMeta;
