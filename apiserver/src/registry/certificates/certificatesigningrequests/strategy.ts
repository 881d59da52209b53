/**
 * CertificateSigningRequest strategy (upstream pkg/registry/certificates/certificates/strategy.go):
 * on create the requestor's identity is recorded in spec (username, uid, groups, extra) and status
 * cleared, so no one creates a pre-approved request; spec is immutable; /status writes keep the
 * Approved/Denied conditions as stored (only /approval changes them) and /approval writes change
 * only status.conditions. Condition timestamps the client leaves out are filled in.
 */
import { CertificateSigningRequests, type KubeObject } from '@mk8s/api';
import type { RestStrategy, StrategyContext } from '../../generic/strategy.js';
import { validateCsrCreate, validateCsrUpdate, type Csr, type CsrCondition } from './validation.js';

type Spec = NonNullable<Csr['spec']>;
type Status = NonNullable<Csr['status']>;

const specOf = (o: KubeObject): Spec => (o['spec'] ?? {}) as Spec;
const statusOf = (o: KubeObject): Status => (o['status'] ?? {}) as Status;
const timeOf = (d: Date): string => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

export const csrStrategy: RestStrategy = {
  resource: CertificateSigningRequests,
  statusSubresource: true,
  tracksGeneration: false,

  prepareForCreate(obj, ctx) {
    const spec: Spec = { ...specOf(obj) };
    // The requestor is whoever made the request, never what the body claims.
    delete spec.username; delete spec.uid; delete spec.groups; delete spec.extra;
    if (ctx.user.username) spec.username = ctx.user.username;
    if (ctx.user.uid) spec.uid = ctx.user.uid;
    if (ctx.user.groups.length) spec.groups = [...ctx.user.groups];
    const extra = ctx.user.extra;
    if (extra && Object.keys(extra).length) spec.extra = structuredClone(extra);
    obj['spec'] = spec;
    delete obj['status'];
  },

  prepareForUpdate(next, prev) {
    next['spec'] = structuredClone(prev['spec']);
    if (prev['status'] === undefined) delete next['status']; else next['status'] = structuredClone(prev['status']);
  },

  prepareForStatusUpdate(next, prev, ctx) {
    next['spec'] = structuredClone(prev['spec']);
    const status = { ...statusOf(next) };
    let conditions = [...(status.conditions ?? [])];
    // Approved/Denied conditions are the /approval subresource's: keep the stored instances.
    for (const t of ['Approved', 'Denied']) conditions = preserveConditionInstances(conditions, statusOf(prev).conditions ?? [], t);
    status.conditions = conditions;
    if (status.conditions.length === 0) delete status.conditions;
    next['status'] = status;
    populateConditionTimestamps(next, prev, ctx);
  },

  prepareForApprovalUpdate(next, prev, ctx) {
    const conditions = statusOf(next).conditions;
    next['spec'] = structuredClone(prev['spec']);
    const status: Status = structuredClone(statusOf(prev));
    if (conditions?.length) status.conditions = conditions; else delete status.conditions;
    next['status'] = status;
    populateConditionTimestamps(next, prev, ctx);
  },

  validate: (obj) => validateCsrCreate(obj as Csr),
  validateUpdate: (next, prev, target) => validateCsrUpdate(next as Csr, prev as Csr, target),
};

/** The conditions with the stored instances of type t in place of the new ones (preserveConditionInstances). */
function preserveConditionInstances(next: CsrCondition[], prev: readonly CsrCondition[], t: string): CsrCondition[] {
  const out = next.filter((c) => c.type !== t);
  out.push(...prev.filter((c) => c.type === t).map((c) => structuredClone(c)));
  return out;
}

/** Fills lastUpdateTime (now) and lastTransitionTime (the stored one for the same type and status, else now). */
function populateConditionTimestamps(next: KubeObject, prev: KubeObject, ctx: StrategyContext): void {
  const now = timeOf(ctx.now);
  const old = statusOf(prev).conditions ?? [];
  for (const c of statusOf(next).conditions ?? []) {
    if (!c.lastUpdateTime) c.lastUpdateTime = now;
    if (!c.lastTransitionTime) {
      const same = old.find((o) => o.type === c.type && o.status === c.status && o.lastTransitionTime);
      c.lastTransitionTime = same?.lastTransitionTime ?? now;
    }
  }
}
