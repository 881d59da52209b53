/**
 * NodeRestriction (plugin/pkg/admission/noderestriction): a kubelet may change only its own Node
 * (and its Lease) and only pods bound to it; it may create only mirror pods. Messages as upstream.
 */
import type { KubeObject } from '@mk8s/api';
import type { AdmissionAttributes, AdmissionOperation, AdmissionPlugin } from '../interfaces.js';
import { nodeNameOf } from '../../auth/node.js';
import { forbidden } from './namespace-lifecycle.js';

export const NAME = 'NodeRestriction';
const MIRROR_ANNOTATION = 'kubernetes.io/config.mirror';

const nodeNameOfPod = (p: KubeObject | undefined) => ((p?.['spec'] ?? {}) as { nodeName?: string }).nodeName ?? '';

export class NodeRestriction implements AdmissionPlugin {
  readonly name = NAME;
  handles(op: AdmissionOperation): boolean { return op !== 'CONNECT'; }

  validate(a: AdmissionAttributes): Promise<void> {
    const node = nodeNameOf(a.user);
    if (node === undefined) return Promise.resolve();
    const g = a.resource.group; const res = a.resource.resource;
    const deny = (resource: string, why: string) => Promise.reject(forbidden(resource, a.name, why));
    if (g === '' && res === 'nodes') {
      if (a.name !== node && (a.object?.metadata.name ?? a.name) !== node) return deny('nodes', `node "${node}" is not allowed to modify node "${a.name}"`);
      return Promise.resolve();
    }
    if (g === '' && res === 'pods') {
      switch (a.operation) {
        case 'CREATE': {
          if (a.subresource === 'eviction' || a.subresource === 'binding') break;
          const annotations = a.object?.metadata.annotations ?? {};
          if (!(MIRROR_ANNOTATION in annotations)) return deny('pods', `pod does not have "${MIRROR_ANNOTATION}" annotation, node "${node}" can only create mirror pods`);
          if (nodeNameOfPod(a.object) !== node) return deny('pods', `node "${node}" can only create pods with spec.nodeName set to itself`);
          break;
        }
        case 'UPDATE':
          if (nodeNameOfPod(a.oldObject) !== node) {
            return deny('pods', `node "${node}" can only update pod status for pods with spec.nodeName set to itself`);
          }
          break;
        case 'DELETE':
          if (nodeNameOfPod(a.oldObject) !== node) return deny('pods', `node "${node}" can only delete pods with spec.nodeName set to itself`);
          break;
        default:
      }
      return Promise.resolve();
    }
    if (g === 'coordination.k8s.io' && res === 'leases' && a.namespace === 'kube-node-lease') {
      if (a.name !== node && (a.object?.metadata.name ?? '') !== node) return deny('leases.coordination.k8s.io', `can only access node lease with the same name as the requesting node`);
    }
    return Promise.resolve();
  }
}
