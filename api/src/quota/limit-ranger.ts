/**
 * LimitRange semantics as upstream's plugin/pkg/admission/limitranger: the defaults a
 * LimitRangeItem gets (SetDefaults_LimitRangeItem), the requests/limits it fills into containers
 * that set none, and the min/max/maxLimitRequestRatio checks with upstream's messages. Pure.
 */
import { formatQuantity, parseQuantityExact } from '../quantity.js';
import { podRequestsAndLimits } from './evaluator.js';
import type { ResourceAmounts } from './resource-list.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const arr = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isObj) : []);

/** SetDefaults_LimitRangeItem: Container items default their limit to max and their request to the limit, else min. */
export function defaultLimitRangeItem(item: Obj): void {
  if (item.type !== 'Container') return;
  const def: Obj = isObj(item.default) ? item.default : (item.default = {});
  const defReq: Obj = isObj(item.defaultRequest) ? item.defaultRequest : (item.defaultRequest = {});
  for (const [k, v] of Object.entries(isObj(item.max) ? item.max : {})) if (!(k in def)) def[k] = v;
  for (const [k, v] of Object.entries(def)) if (!(k in defReq)) defReq[k] = v;
  for (const [k, v] of Object.entries(isObj(item.min) ? item.min : {})) if (!(k in defReq)) defReq[k] = v;
}

/**
 * Fills the Container defaults of every LimitRange into containers (and init containers) that
 * leave them out. Mutates pod; returns the `kubernetes.io/limit-ranger` annotation text, or
 * undefined when nothing was set.
 */
export function applyLimitRangeDefaults(pod: Obj, limitRanges: readonly Obj[]): string | undefined {
  let defReq: ResourceAmounts = {}, defLim: ResourceAmounts = {};
  for (const lr of limitRanges) {
    for (const item of arr(lr.spec?.limits)) {
      if (item.type !== 'Container') continue;
      defLim = { ...defLim, ...(item.default ?? {}) };
      defReq = { ...defReq, ...(item.defaultRequest ?? {}) };
    }
  }
  if (Object.keys(defReq).length === 0 && Object.keys(defLim).length === 0) return undefined;
  const notes: string[] = [];
  for (const c of [...arr(pod.spec?.containers), ...arr(pod.spec?.initContainers)]) {
    const res: Obj = isObj(c.resources) ? c.resources : (c.resources = {});
    const setReq: string[] = [], setLim: string[] = [];
    for (const [k, v] of Object.entries(defLim)) {
      const lim: Obj = isObj(res.limits) ? res.limits : {};
      if (!(k in lim)) { res.limits = { ...lim, [k]: canonical(v) }; setLim.push(k); }
    }
    for (const [k, v] of Object.entries(defReq)) {
      const req: Obj = isObj(res.requests) ? res.requests : {};
      if (!(k in req)) { res.requests = { ...req, [k]: canonical(v) }; setReq.push(k); }
    }
    if (setReq.length) notes.push(`${setReq.sort().join(', ')} request for ${isInit(pod, c) ? 'init container' : 'container'} ${c.name}`);
    if (setLim.length) notes.push(`${setLim.sort().join(', ')} limit for ${isInit(pod, c) ? 'init container' : 'container'} ${c.name}`);
  }
  return notes.length ? `LimitRanger plugin set: ${notes.join('; ')}` : undefined;
}
const isInit = (pod: Obj, c: Obj): boolean => arr(pod.spec?.initContainers).includes(c);
const canonical = (v: unknown): string => formatQuantity(parseQuantityExact(v as string));

interface Q { num: bigint; den: bigint }
const qv = (v: unknown): Q => parseQuantityExact(v as string);
const cmp = (a: Q, b: Q): number => { const l = a.num * b.den, r = b.num * a.den; return l < r ? -1 : l > r ? 1 : 0; };
const str = (v: unknown): string => formatQuantity(parseQuantityExact(v as string));

function minConstraint(kind: string, name: string, enforced: unknown, req: ResourceAmounts, lim: ResourceAmounts): string | undefined {
  if (!(name in req)) return `minimum ${name} usage per ${kind} is ${str(enforced)}.  No request is specified`;
  if (cmp(qv(req[name]), qv(enforced)) < 0) return `minimum ${name} usage per ${kind} is ${str(enforced)}, but request is ${str(req[name])}`;
  if (name in lim && cmp(qv(lim[name]), qv(enforced)) < 0) return `minimum ${name} usage per ${kind} is ${str(enforced)}, but limit is ${str(lim[name])}`;
  return undefined;
}
function maxConstraint(kind: string, name: string, enforced: unknown, req: ResourceAmounts, lim: ResourceAmounts): string | undefined {
  if (!(name in lim)) return `maximum ${name} usage per ${kind} is ${str(enforced)}.  No limit is specified`;
  if (cmp(qv(lim[name]), qv(enforced)) > 0) return `maximum ${name} usage per ${kind} is ${str(enforced)}, but limit is ${str(lim[name])}`;
  if (name in req && cmp(qv(req[name]), qv(enforced)) > 0) return `maximum ${name} usage per ${kind} is ${str(enforced)}, but request is ${str(req[name])}`;
  return undefined;
}
function ratioConstraint(kind: string, name: string, enforced: unknown, req: ResourceAmounts, lim: ResourceAmounts): string | undefined {
  const r = name in req ? qv(req[name]) : undefined, l = name in lim ? qv(lim[name]) : undefined;
  if (!r || r.num === 0n) return `${name} max limit to request ratio per ${kind} is ${str(enforced)}, but no request is specified or request is 0`;
  if (!l || l.num === 0n) return `${name} max limit to request ratio per ${kind} is ${str(enforced)}, but no limit is specified or limit is 0`;
  const observed = (Number(l.num) / Number(l.den)) / (Number(r.num) / Number(r.den));
  const e = qv(enforced);
  if (observed > Number(e.num) / Number(e.den)) return `${name} max limit to request ratio per ${kind} is ${str(enforced)}, but provided ratio is ${observed.toFixed(6)}`;
  return undefined;
}

function checkItem(kind: string, item: Obj, req: ResourceAmounts, lim: ResourceAmounts, errs: string[]): void {
  for (const [n, v] of Object.entries(isObj(item.min) ? item.min : {})) { const e = minConstraint(kind, n, v, req, lim); if (e) errs.push(e); }
  for (const [n, v] of Object.entries(isObj(item.max) ? item.max : {})) { const e = maxConstraint(kind, n, v, req, lim); if (e) errs.push(e); }
  for (const [n, v] of Object.entries(isObj(item.maxLimitRequestRatio) ? item.maxLimitRequestRatio : {})) { const e = ratioConstraint(kind, n, v, req, lim); if (e) errs.push(e); }
}

/** PodValidateLimitFunc: the violations of a (defaulted) pod against every LimitRange, in upstream's words. */
export function validatePodLimits(pod: Obj, limitRanges: readonly Obj[]): string[] {
  const errs: string[] = [];
  for (const lr of limitRanges) {
    for (const item of arr(lr.spec?.limits)) {
      if (item.type === 'Container') {
        for (const c of [...arr(pod.spec?.containers), ...arr(pod.spec?.initContainers)]) {
          checkItem('Container', item, c.resources?.requests ?? {}, c.resources?.limits ?? {}, errs);
        }
      } else if (item.type === 'Pod') {
        const { requests, limits } = podRequestsAndLimits(pod);
        checkItem('Pod', item, requests, limits, errs);
      }
    }
  }
  return errs;
}
