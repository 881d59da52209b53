/**
 * Admission webhooks (upstream's MutatingAdmissionWebhook and ValidatingAdmissionWebhook plugins),
 * last in the admission chain as upstream orders them: each write that a webhook's rules,
 * namespaceSelector and objectSelector match is sent as an admission.k8s.io/v1 AdmissionReview to
 * its HTTPS endpoint (clientConfig.url, or a Service's cluster IP; caBundle trusted), within
 * timeoutSeconds. Mutating webhooks run in order of configuration name and may answer a JSONPatch;
 * a mutating webhook with reinvocationPolicy IfNeeded runs once more when a later one changed the
 * object. Validating webhooks run in parallel; any denial rejects. A failed call rejects under
 * failurePolicy Fail and is skipped under Ignore. Matching is pure (matchesWebhook).
 */
import { request as httpsRequest } from 'node:https';
import { randomUUID } from 'node:crypto';
import { ApiError, applyJsonPatch, apiVersionOf, labelSelectorFromObject, type KubeObject } from '@mk8s/api';
import type { AdmissionAttributes, AdmissionPlugin } from '../admission/interfaces.js';
import type { RuleWithOperations, Webhook, WebhookConfiguration } from './types.js';

const matchList = (list: readonly string[] | undefined, v: string): boolean => !!list && (list.includes('*') || list.includes(v));

/** Whether a rule covers the request: operation, group, version, resource[/subresource] and scope. */
export function ruleMatches(r: RuleWithOperations, a: Pick<AdmissionAttributes, 'operation' | 'resource' | 'subresource' | 'namespace'>): boolean {
  if (!matchList(r.operations, a.operation)) return false;
  if (!matchList(r.apiGroups, a.resource.group)) return false;
  if (!matchList(r.apiVersions, a.resource.version)) return false;
  const res = a.resource.resource; const sub = a.subresource;
  const want = sub ? `${res}/${sub}` : res;
  const resOk = (r.resources ?? []).some((x) => x === '*/*' || x === want || (x === '*' && !sub) || (sub && x === `*/${sub}`) || (sub && x === `${res}/*`));
  if (!resOk) return false;
  const scope = r.scope ?? '*';
  if (scope === 'Cluster' && a.resource.namespaced) return false;
  if (scope === 'Namespaced' && !a.resource.namespaced) return false;
  return true;
}

/**
 * Whether a webhook is called for a request: a rule matches, the object (or old object) matches
 * objectSelector, and the namespace's labels match namespaceSelector (cluster-scoped objects
 * always match it, except namespaces themselves, which match on their own labels).
 */
export function matchesWebhook(w: Webhook, a: AdmissionAttributes, namespaceLabels: Record<string, string> | undefined): boolean {
  if (!(w.rules ?? []).some((r) => ruleMatches(r, a))) return false;
  const obj = labelSelectorFromObject(w.objectSelector ?? {});
  if (!obj.empty && !obj.matches(a.object?.metadata.labels ?? {}) && !obj.matches(a.oldObject?.metadata.labels ?? {})) return false;
  const nsSel = labelSelectorFromObject(w.namespaceSelector ?? {});
  const isNamespace = a.resource.group === '' && a.resource.resource === 'namespaces';
  if (!nsSel.empty && (a.resource.namespaced || isNamespace)) {
    const labels = isNamespace ? (a.object ?? a.oldObject)?.metadata.labels ?? {} : namespaceLabels ?? {};
    if (!nsSel.matches(labels)) return false;
  }
  return true;
}

export interface AdmissionReviewResponse {
  uid: string;
  allowed: boolean;
  status?: { code?: number; message?: string; reason?: string };
  patch?: string;
  patchType?: string;
  warnings?: string[];
}

/** The AdmissionReview request for one write. */
export function admissionReview(a: AdmissionAttributes, uid: string): Record<string, unknown> {
  const r = a.resource;
  const kind = { group: r.group, version: r.version, kind: r.kind };
  const resource = { group: r.group, version: r.version, resource: r.resource };
  const request: Record<string, unknown> = {
    uid, kind, resource, requestKind: kind, requestResource: resource, name: a.name, namespace: a.namespace || undefined,
    operation: a.operation, userInfo: { username: a.user.username, ...(a.user.uid ? { uid: a.user.uid } : {}), groups: a.user.groups, ...(a.user.extra ? { extra: a.user.extra } : {}) },
    object: a.operation === 'DELETE' ? null : a.object ? { apiVersion: apiVersionOf(r), kind: r.kind, ...a.object } : null,
    oldObject: a.oldObject ? { apiVersion: apiVersionOf(r), kind: r.kind, ...a.oldObject } : null,
    dryRun: a.dryRun,
    options: { apiVersion: 'meta.k8s.io/v1', kind: a.operation === 'CREATE' ? 'CreateOptions' : a.operation === 'UPDATE' ? 'UpdateOptions' : 'DeleteOptions' },
  };
  if (a.subresource) request['subResource'] = a.subresource;
  return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request };
}

/** Where a webhook is reached: its URL, or https://<service cluster IP>:<port><path>. */
export type ServiceResolver = (namespace: string, name: string, port: number) => Promise<string>;

/** Posts the review and returns the response part; throws an Error (the call failed) otherwise. */
export async function callWebhook(w: Webhook, review: Record<string, unknown>, resolve: ServiceResolver): Promise<AdmissionReviewResponse> {
  const cc = w.clientConfig;
  let url: URL;
  if (cc.url) url = new URL(cc.url);
  else {
    const s = cc.service!;
    const host = await resolve(s.namespace, s.name, s.port ?? 443);
    url = new URL(`https://${host}${s.path ?? ''}`);
  }
  const ca = cc.caBundle ? Buffer.from(cc.caBundle, 'base64').toString('utf8') : undefined;
  const body = Buffer.from(JSON.stringify(review));
  const timeoutMs = (w.timeoutSeconds ?? 10) * 1000;
  const text = await new Promise<string>((resolveText, reject) => {
    const req = httpsRequest(url, {
      method: 'POST', ...(ca ? { ca } : {}),
      ...(cc.service ? { servername: `${cc.service.name}.${cc.service.namespace}.svc` } : {}),
      headers: { 'content-type': 'application/json', accept: 'application/json', 'content-length': body.length },
    }, (res) => {
      let data = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => { data += d; });
      res.on('end', () => {
        if ((res.statusCode ?? 0) < 200 || (res.statusCode ?? 0) >= 300) reject(new Error(`the server responded with the status code ${res.statusCode} but did not return a valid AdmissionReview`));
        else resolveText(data);
      });
      res.on('error', reject);
    });
    // timeoutSeconds bounds the whole call (upstream's request context), not just socket idleness.
    const deadline = setTimeout(() => req.destroy(new Error('context deadline exceeded')), timeoutMs);
    req.on('close', () => clearTimeout(deadline));
    // Go's url.Error wording, as upstream's message carries it: Post "<url>": <cause>.
    req.on('error', (err) => reject(new Error(`Post "${cc.url ?? `https://${cc.service!.name}.${cc.service!.namespace}.svc:${cc.service!.port ?? 443}${cc.service!.path ?? ''}`}": ${err.message}`)));
    req.end(body);
  });
  let parsed: { response?: AdmissionReviewResponse };
  try { parsed = JSON.parse(text) as { response?: AdmissionReviewResponse }; } catch { throw new Error('the webhook response is not a valid AdmissionReview'); }
  const resp = parsed.response;
  if (!resp) throw new Error('webhook response was absent');
  const uid = (review['request'] as { uid: string }).uid;
  if (resp.uid !== uid) throw new Error(`expected response.uid="${uid}", got "${String(resp.uid)}"`);
  return resp;
}

export interface WebhookSource {
  /** The current configurations (from the watch cache). */
  list(): Promise<WebhookConfiguration[]>;
}

export interface WebhookAdmissionOptions {
  validating: WebhookSource;
  mutating: WebhookSource;
  /** The labels of a namespace (undefined when it does not exist). */
  namespaceLabels(name: string): Promise<Record<string, string> | undefined>;
  resolveService: ServiceResolver;
}

/** Webhooks never see writes to their own configurations (upstream leaves them out so a broken webhook cannot lock itself in). */
const exempt = (a: AdmissionAttributes) => a.resource.group === 'admissionregistration.k8s.io';

function denied(name: string, status: AdmissionReviewResponse['status']): ApiError {
  const by = `admission webhook "${name}" denied the request`;
  const message = status?.message ? `${by}: ${status.message}` : status?.reason ? `${by}: ${status.reason}` : `${by} without explanation`;
  return new ApiError(status?.reason || 'Forbidden', message, { code: status?.code || 403 });
}

function failed(name: string, err: unknown): ApiError {
  return new ApiError('InternalError', `Internal error occurred: failed calling webhook "${name}": failed to call webhook: ${err instanceof Error ? err.message : String(err)}`, { code: 500 });
}

const sortedByName = (cs: WebhookConfiguration[]) => [...cs].sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0));

async function applicable(configs: WebhookConfiguration[], a: AdmissionAttributes, o: WebhookAdmissionOptions): Promise<Webhook[]> {
  const hooks = sortedByName(configs).flatMap((c) => c.webhooks ?? []);
  if (hooks.length === 0) return [];
  let nsLabels: Record<string, string> | undefined;
  if (a.resource.namespaced && a.namespace && hooks.some((w) => !labelSelectorFromObject(w.namespaceSelector ?? {}).empty)) nsLabels = await o.namespaceLabels(a.namespace);
  return hooks.filter((w) => matchesWebhook(w, a, nsLabels));
}

/** Replaces the contents of target with those of source (admission mutates the object in place). */
function replaceContents(target: KubeObject, source: KubeObject): void {
  for (const k of Object.keys(target)) delete (target as Record<string, unknown>)[k];
  Object.assign(target, source);
}

/** The mutating plugin. */
export function mutatingWebhookAdmission(o: WebhookAdmissionOptions): AdmissionPlugin {
  return {
    name: 'MutatingAdmissionWebhook',
    handles: (op) => op === 'CREATE' || op === 'UPDATE' || op === 'DELETE' || op === 'CONNECT',
    admit: async (a) => {
      if (exempt(a)) return;
      const hooks = await applicable(await o.mutating.list(), a, o);
      if (hooks.length === 0) return;
      const call = async (w: Webhook): Promise<boolean> => {
        let resp: AdmissionReviewResponse;
        try { resp = await callWebhook(w, admissionReview(a, randomUUID()), o.resolveService); } catch (err) {
          if (w.failurePolicy === 'Ignore') return false;
          throw failed(w.name, err);
        }
        for (const warning of resp.warnings ?? []) a.warnings?.push(warning);
        if (!resp.allowed) throw denied(w.name, resp.status);
        if (!resp.patch || !a.object) return false;
        if (resp.patchType && resp.patchType !== 'JSONPatch') throw failed(w.name, new Error(`unsupported patch type "${resp.patchType}"`));
        const ops = JSON.parse(Buffer.from(resp.patch, 'base64').toString('utf8')) as unknown;
        const before = JSON.stringify(a.object);
        const next = applyJsonPatch(structuredClone(a.object), ops) as KubeObject;
        replaceContents(a.object, next);
        return JSON.stringify(a.object) !== before;
      };
      let changedAfter = -1;
      for (let i = 0; i < hooks.length; i++) if (await call(hooks[i]!)) changedAfter = i;
      // Reinvocation: IfNeeded webhooks that ran before the last change see the object once more.
      if (changedAfter > 0) {
        for (let i = 0; i < changedAfter; i++) if (hooks[i]!.reinvocationPolicy === 'IfNeeded') await call(hooks[i]!);
      }
    },
  };
}

/** The validating plugin. */
export function validatingWebhookAdmission(o: WebhookAdmissionOptions): AdmissionPlugin {
  return {
    name: 'ValidatingAdmissionWebhook',
    handles: (op) => op === 'CREATE' || op === 'UPDATE' || op === 'DELETE' || op === 'CONNECT',
    validate: async (a) => {
      if (exempt(a)) return;
      const hooks = await applicable(await o.validating.list(), a, o);
      const results = await Promise.all(hooks.map(async (w) => {
        try { return { w, resp: await callWebhook(w, admissionReview(a, randomUUID()), o.resolveService) }; } catch (err) {
          return { w, err };
        }
      }));
      for (const r of results) {
        if ('err' in r) { if (r.w.failurePolicy !== 'Ignore') throw failed(r.w.name, r.err); continue; }
        for (const warning of r.resp.warnings ?? []) a.warnings?.push(warning);
        if (!r.resp.allowed) throw denied(r.w.name, r.resp.status);
      }
    },
  };
}
