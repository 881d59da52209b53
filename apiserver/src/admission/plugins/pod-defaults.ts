/**
 * What upstream's default admission chain adds to every new Pod: the ServiceAccount plugin's
 * serviceAccountName, DefaultTolerationSeconds' not-ready/unreachable tolerations, and
 * preemptionPolicy (@mk8s/api admitPodDefaults). Mutating, pods create only.
 */
import { admitPodDefaults } from '@mk8s/api';
import type { AdmissionAttributes, AdmissionOperation, AdmissionPlugin } from '../interfaces.js';

export const NAME = 'DefaultPodFields';

export class DefaultPodFields implements AdmissionPlugin {
  readonly name = NAME;
  handles(op: AdmissionOperation): boolean { return op === 'CREATE'; }
  admit(a: AdmissionAttributes): Promise<void> {
    if (a.resource.group === '' && a.resource.resource === 'pods' && a.subresource === '' && a.object) admitPodDefaults(a.object);
    return Promise.resolve();
  }
}
