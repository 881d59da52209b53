/**
 * NamespaceLifecycle (upstream plugin/pkg/admission/namespace/lifecycle): no new content in a
 * missing or Terminating namespace, and the system namespaces may not be deleted.
 */
import { ApiError, errors, qualifiedResource, type KubeObject } from '@mk8s/api';
import type { AdmissionAttributes, AdmissionOperation, AdmissionPlugin } from '../interfaces.js';

export const NAME = 'NamespaceLifecycle';
/** Namespaces that can never be deleted. */
export const IMMORTAL_NAMESPACES: readonly string[] = ['default', 'kube-system', 'kube-public'];

export class NamespaceLifecycle implements AdmissionPlugin {
  readonly name = NAME;
  /** getNamespace resolves undefined when the namespace does not exist. */
  constructor(readonly getNamespace: (name: string) => Promise<KubeObject | undefined>) {}

  handles(op: AdmissionOperation): boolean { return op === 'CREATE' || op === 'DELETE'; }

  async validate(a: AdmissionAttributes): Promise<void> {
    if (a.operation === 'DELETE') {
      if (a.resource.resource === 'namespaces' && a.resource.group === '' && IMMORTAL_NAMESPACES.includes(a.name)) {
        throw forbidden('namespaces', a.name, 'this namespace may not be deleted');
      }
      return;
    }
    if (!a.resource.namespaced || a.subresource !== '') return;
    const ns = await this.getNamespace(a.namespace);
    if (!ns) throw errors.notFound('namespaces', a.namespace);
    const phase = ((ns['status'] ?? {}) as { phase?: string }).phase;
    if (phase === 'Terminating' || ns.metadata.deletionTimestamp) {
      throw forbidden(qualifiedResource(a.resource), a.name,
        `unable to create new content in namespace ${a.namespace} because it is being terminated`);
    }
  }
}

/** errors.NewForbidden with upstream's message shapes. */
export function forbidden(resource: string, name: string, why: string): ApiError {
  const dot = resource.indexOf('.');
  const details = dot < 0 ? { name, kind: resource } : { name, kind: resource.slice(0, dot), group: resource.slice(dot + 1) };
  const message = !resource ? `forbidden: ${why}` : name ? `${resource} "${name}" is forbidden: ${why}` : `${resource} is forbidden: ${why}`;
  return new ApiError('Forbidden', message, { details });
}
