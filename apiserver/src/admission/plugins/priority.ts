/**
 * Priority (upstream plugin/pkg/admission/priority): resolves a new Pod's priorityClassName to
 * spec.priority (and preemptionPolicy), or the globalDefault class's value, else 0. An unknown
 * class is Forbidden. Also supplies the two built-in system classes.
 */
import type { KubeObject } from '@mk8s/api';
import type { AdmissionAttributes, AdmissionOperation, AdmissionPlugin } from '../interfaces.js';
import { forbidden } from './namespace-lifecycle.js';

export const NAME = 'Priority';

/** Upstream's built-in classes (scheduling/v1 SystemPriorityClasses). */
export const SYSTEM_PRIORITY_CLASSES: readonly KubeObject[] = [
  { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'system-node-critical' }, value: 2000001000,
    description: 'Used for system critical pods that must not be moved from their current node.', preemptionPolicy: 'PreemptLowerPriority' },
  { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'system-cluster-critical' }, value: 2000000000,
    description: 'Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.', preemptionPolicy: 'PreemptLowerPriority' },
];

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export class Priority implements AdmissionPlugin {
  readonly name = NAME;
  /** getClass resolves undefined for a missing class; listClasses returns every class. */
  constructor(private readonly classes: { get(name: string): Promise<KubeObject | undefined>; list(): Promise<KubeObject[]> }) {}

  handles(op: AdmissionOperation): boolean { return op === 'CREATE'; }

  async admit(a: AdmissionAttributes): Promise<void> {
    if (a.resource.group !== '' || a.resource.resource !== 'pods' || a.subresource !== '' || !a.object) return;
    const spec = ((a.object['spec'] ??= {}) as Obj);
    const name = spec['priorityClassName'] as string | undefined;
    let pc: KubeObject | undefined;
    if (name) {
      pc = await this.classes.get(name);
      if (!pc) throw forbidden('pods', a.name, `no PriorityClass with name ${name} was found`);
    } else {
      pc = (await this.classes.list()).find((c) => c['globalDefault'] === true);
    }
    const value = typeof pc?.['value'] === 'number' ? pc['value'] : 0;
    if (spec['priority'] !== undefined && spec['priority'] !== value) {
      throw forbidden('pods', a.name, `the integer value of priority (${String(spec['priority'])}) must not be provided in pod spec; priority admission controller computed ${value} from the given PriorityClass name`);
    }
    spec['priority'] = value;
    if (pc?.['preemptionPolicy']) spec['preemptionPolicy'] = pc['preemptionPolicy'];
  }
}
