/**
 * Admission: plugins that see every write after authorization (apiserver admission.Interface).
 * Mutating plugins run first and may change the object; then the resource's strategy validates
 * it; then validating plugins may only reject. Plugins reject by throwing an ApiError.
 */
import type { KubeObject, ResourceDescriptor } from '@mk8s/api';
import type { UserInfo } from '../auth/authentication.js';

export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

/** One write as admission sees it (admission.Attributes). */
export interface AdmissionAttributes {
  operation: AdmissionOperation;
  resource: ResourceDescriptor;
  subresource: string;
  namespace: string;
  /** May be '' on create with generateName. */
  name: string;
  /** The new object (CREATE/UPDATE); plugins in admit() may mutate it in place. */
  object: KubeObject | undefined;
  /** The current object (UPDATE/DELETE). */
  oldObject: KubeObject | undefined;
  user: UserInfo;
  dryRun: boolean;
  /** The request's warnings (sent as `Warning: 299` headers); plugins may append. Absent: nowhere to warn. */
  warnings?: string[];
}

/**
 * AdmissionPlugin: admit (mutating) and/or validate. Both are called once per write, concurrently
 * across requests; a throw (ApiError) rejects the request with that Status. On update, they run
 * inside the storage retry loop and may be called again with a fresher oldObject.
 */
export interface AdmissionPlugin {
  readonly name: string;
  /** True if the plugin cares about this operation (cheap; checked before admit/validate). */
  handles(op: AdmissionOperation): boolean;
  admit?(attrs: AdmissionAttributes): Promise<void>;
  validate?(attrs: AdmissionAttributes): Promise<void>;
}

/** Runs the mutating phase of every plugin in order. */
export async function runMutatingAdmission(plugins: readonly AdmissionPlugin[], attrs: AdmissionAttributes): Promise<void> {
  for (const p of plugins) if (p.admit && p.handles(attrs.operation)) await p.admit(attrs);
}

/** Runs the validating phase of every plugin in order. */
export async function runValidatingAdmission(plugins: readonly AdmissionPlugin[], attrs: AdmissionAttributes): Promise<void> {
  for (const p of plugins) if (p.validate && p.handles(attrs.operation)) await p.validate(attrs);
}
