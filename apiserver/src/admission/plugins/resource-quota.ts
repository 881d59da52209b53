/**
 * ResourceQuota (upstream plugin/pkg/admission/resourcequota): a create (or a Service update)
 * whose usage would take a namespace's quota past status.hard is refused with 403 "exceeded
 * quota: <name>, requested: ..., used: ..., limited: ..."; an admitted one is charged to the
 * quota's status.used at once (compare-and-swap on the quota, retried on conflict), so that two
 * concurrent creates cannot both take the last unit. The resource-quota controller recomputes
 * status.used from what exists (releasing what deletions and failed writes leave behind).
 */
import {
  addLists, isConflict, isZeroList, lessThanOrEqual, maskList, matchesResourceName, matchesScopes, podConstraints, prettyPrint,
  qualifiedResource, quotaUsage, subtractLists, type KubeObject, type ResourceAmounts,
} from '@mk8s/api';
import type { AdmissionAttributes, AdmissionOperation, AdmissionPlugin } from '../interfaces.js';
import { forbidden } from './namespace-lifecycle.js';

export const NAME = 'ResourceQuota';
const MAX_ATTEMPTS = 5;

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export interface ResourceQuotaAdmissionOptions {
  /** The namespace's quotas; live=false may answer from the watch cache. */
  listQuotas(namespace: string, live: boolean): Promise<KubeObject[]>;
  /** Writes quota's status (compare-and-swap on metadata.resourceVersion; a stale one throws Conflict). */
  updateQuotaStatus(quota: KubeObject): Promise<void>;
  now(): number;
}

export class ResourceQuotaAdmission implements AdmissionPlugin {
  readonly name = NAME;
  constructor(private readonly o: ResourceQuotaAdmissionOptions) {}

  handles(op: AdmissionOperation): boolean { return op === 'CREATE' || op === 'UPDATE'; }

  async validate(a: AdmissionAttributes): Promise<void> {
    if (a.subresource !== '' || !a.resource.namespaced || !a.namespace || !a.object) return;
    // Updates change usage only for services (type, ports); pods' resources are immutable.
    if (a.operation === 'UPDATE' && !(a.resource.group === '' && a.resource.resource === 'services')) return;
    let quotas = await this.o.listQuotas(a.namespace, false);
    if (quotas.length === 0) return;
    const now = this.o.now();
    for (let attempt = 1; ; attempt++) {
      const updated = this.charge(a, quotas, now);
      if (a.dryRun || updated.length === 0) return;
      try {
        for (const q of updated) await this.o.updateQuotaStatus(q);
        return;
      } catch (err) {
        if (!isConflict(err) || attempt >= MAX_ATTEMPTS) throw err;
        quotas = await this.o.listQuotas(a.namespace, true);
      }
    }
  }

  /** checkRequest: the quotas with their new status.used, or a Forbidden. Pure. */
  private charge(a: AdmissionAttributes, quotas: readonly KubeObject[], now: number): KubeObject[] {
    const obj = a.object as Obj;
    const r = a.resource;
    const out: KubeObject[] = [];
    const name = a.name || a.object!.metadata.name || '';
    const deny = (why: string) => forbidden(qualifiedResource(r), name, why);
    for (const quota of quotas) {
      const q = quota as Obj;
      if (!matchesScopes(q, r, obj)) continue;
      const specHard = Object.keys(q.spec?.hard ?? {});
      const required = specHard.filter((n) => matchesResourceName(r, n));
      if (required.length === 0) continue;
      if (r.group === '' && r.resource === 'pods') {
        const missing = podConstraints(required, obj);
        if (missing) throw deny(`failed quota: ${quota.metadata.name}: ${missing}`);
      }
      const hard: ResourceAmounts = q.status?.hard ?? {};
      const used: ResourceAmounts = q.status?.used ?? {};
      const unknown = required.filter((n) => !(n in hard) || !(n in used)).sort();
      if (unknown.length) throw deny(`status unknown for quota: ${quota.metadata.name}, resources: ${unknown.join(',')}`);
      let delta = quotaUsage(q, r, obj, now);
      if (a.operation === 'UPDATE' && a.oldObject) delta = subtractLists(delta, quotaUsage(q, r, a.oldObject as Obj, now));
      if (isZeroList(delta)) continue;
      const requested = maskList(delta, Object.keys(hard));
      const newUsed = addLists(used, requested);
      const { ok, exceeded } = lessThanOrEqual(maskList(newUsed, Object.keys(requested)), hard);
      if (!ok) {
        throw deny(`exceeded quota: ${quota.metadata.name}, requested: ${prettyPrint(maskList(requested, exceeded))}, `
          + `used: ${prettyPrint(maskList(used, exceeded))}, limited: ${prettyPrint(maskList(hard, exceeded))}`);
      }
      out.push({ ...structuredClone(quota), status: { ...(q.status ?? {}), used: newUsed } });
    }
    return out;
  }
}
