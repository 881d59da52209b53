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
import { ApiError, applyJsonPatch, apiVersionOf, labelSelectorFromObject, type KubeObject, type ParsedLabelSelector } from '@mk8s/api';
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

/** A webhook with its selectors parsed once (upstream's compiled webhook accessor). */
export interface CompiledWebhook {
  readonly webhook: Webhook;
  readonly objectSelector: ParsedLabelSelector;
  readonly namespaceSelector: ParsedLabelSelector;
}

export function compileWebhook(w: Webhook): CompiledWebhook {
  return { webhook: w, objectSelector: labelSelectorFromObject(w.objectSelector ?? {}), namespaceSelector: labelSelectorFromObject(w.namespaceSelector ?? {}) };
}

/**
 * Whether a webhook is called for a request: a rule matches, the object (or old object) matches
 * objectSelector, and the namespace's labels match namespaceSelector (cluster-scoped objects
 * always match it, except namespaces themselves, which match on their own labels).
 */
export function matchesWebhook(w: Webhook | CompiledWebhook, a: AdmissionAttributes, namespaceLabels: Record<string, string> | undefined): boolean {
  const c = 'webhook' in w ? w : compileWebhook(w);
  if (!(c.webhook.rules ?? []).some((r) => ruleMatches(r, a))) return false;
  const obj = c.objectSelector;
  if (!obj.empty && !obj.matches(a.object?.metadata.labels ?? {}) && !obj.matches(a.oldObject?.metadata.labels ?? {})) return false;
  const nsSel = c.namespaceSelector;
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

/** A response that is not a usable AdmissionReview (upstream's "received invalid webhook response"). */
export class InvalidWebhookResponse extends Error {}

/**
 * The URL a webhook is called at, with `timeout=<timeoutSeconds>s` as upstream's REST client adds
 * it (the webhook learns its deadline); host is the resolved address of a service.
 */
export function webhookUrl(w: Webhook, host?: string): URL {
  const cc = w.clientConfig;
  const s = cc.service;
  const url = cc.url ? new URL(cc.url) : new URL(`https://${host ?? `${s!.name}.${s!.namespace}.svc:${s!.port ?? 443}`}${s!.path ?? ''}`);
  url.searchParams.set('timeout', `${w.timeoutSeconds ?? 10}s`);
  return url;
}

/**
 * Posts the review and returns the response part; throws an Error when the call failed, an
 * InvalidWebhookResponse when the answer is not a valid AdmissionReview response.
 */
export async function callWebhook(w: Webhook, review: Record<string, unknown>, resolve: ServiceResolver): Promise<AdmissionReviewResponse> {
  const cc = w.clientConfig;
  const s = cc.service;
  const url = s ? webhookUrl(w, await resolve(s.namespace, s.name, s.port ?? 443)) : webhookUrl(w);
  // Go's url.Error names the URL the client asked for: the service's DNS name and port, not its IP.
  const named = webhookUrl(w);
  const shownUrl = s ? `https://${s.name}.${s.namespace}.svc:${s.port ?? 443}${named.pathname}${named.search}` : named.toString();
  const ca = cc.caBundle ? Buffer.from(cc.caBundle, 'base64').toString('utf8') : undefined;
  const body = Buffer.from(JSON.stringify(review));
  const timeoutMs = (w.timeoutSeconds ?? 10) * 1000;
  const text = await new Promise<string>((resolveText, reject) => {
    const req = httpsRequest(url, {
      method: 'POST', ...(ca ? { ca } : {}),
      ...(s ? { servername: `${s.name}.${s.namespace}.svc` } : {}),
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
    req.on('error', (err) => reject(new Error(`Post "${shownUrl}": ${err.message}`)));
    req.end(body);
  });
  let parsed: { response?: AdmissionReviewResponse };
  // A body that does not decode fails the call itself (upstream: the client's Into).
  try { parsed = JSON.parse(text) as { response?: AdmissionReviewResponse }; } catch (err) { throw new Error(`the webhook response is not a valid AdmissionReview: ${(err as Error).message}`); }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('the webhook response is not a valid AdmissionReview');
  const resp = parsed.response;
  if (!resp || typeof resp !== 'object') throw new InvalidWebhookResponse('webhook response was absent');
  const uid = (review['request'] as { uid: string }).uid;
  if (resp.uid !== uid) throw new InvalidWebhookResponse(`expected response.uid="${uid}", got "${String(resp.uid)}"`);
  if (typeof resp.allowed !== 'boolean') throw new InvalidWebhookResponse('webhook response.allowed is not a boolean');
  if (resp.patch !== undefined && resp.patch !== '' && !resp.patchType) throw new InvalidWebhookResponse('webhook returned response.patch but not response.patchType');
  return resp;
}

export interface WebhookSource {
  /** The current configurations (from the watch cache), with their resourceVersions. */
  list(): Promise<WebhookConfiguration[]>;
}

export interface WebhookAdmissionOptions {
  validating: WebhookSource;
  mutating: WebhookSource;
  /** The labels of a namespace (undefined when it does not exist). */
  namespaceLabels(name: string): Promise<Record<string, string> | undefined>;
  resolveService: ServiceResolver;
}

/**
 * The webhooks of a set of configurations, in configuration-name order, compiled once: a
 * configuration is compiled again only when its resourceVersion changed (upstream's
 * configuration manager re-derives its accessors on an informer change, not per request).
 */
export class CompiledWebhookSet {
  private byName = new Map<string, { resourceVersion: string; hooks: CompiledWebhook[] }>();
  private key = '';
  private hooks: CompiledWebhook[] = [];
  /** How many configurations were compiled (for tests). */
  compiled = 0;

  /** The compiled, ordered webhooks for the current configurations. */
  update(configs: readonly WebhookConfiguration[]): readonly CompiledWebhook[] {
    const sorted = [...configs].sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0));
    const key = sorted.map((c) => `${c.metadata.name}@${c.metadata.resourceVersion ?? ''}`).join(',');
    if (key === this.key) return this.hooks;
    const next = new Map<string, { resourceVersion: string; hooks: CompiledWebhook[] }>();
    for (const c of sorted) {
      const rv = c.metadata.resourceVersion ?? '';
      let entry = this.byName.get(c.metadata.name);
      // A configuration without a resourceVersion (not from storage) is never taken as unchanged.
      if (!entry || entry.resourceVersion !== rv || rv === '') {
        entry = { resourceVersion: rv, hooks: (c.webhooks ?? []).map(compileWebhook) };
        this.compiled++;
      }
      next.set(c.metadata.name, entry);
    }
    this.byName = next;
    this.key = key;
    this.hooks = sorted.flatMap((c) => next.get(c.metadata.name)!.hooks);
    return this.hooks;
  }
}

/** Webhooks never see writes to their own configurations (upstream leaves them out so a broken webhook cannot lock itself in). */
const exempt = (a: AdmissionAttributes) => a.resource.group === 'admissionregistration.k8s.io';

function denied(name: string, status: AdmissionReviewResponse['status']): ApiError {
  const by = `admission webhook "${name}" denied the request`;
  const message = status?.message ? `${by}: ${status.message}` : status?.reason ? `${by}: ${status.reason}` : `${by} without explanation`;
  return new ApiError(status?.reason || 'Forbidden', message, { code: status?.code || 403 });
}

/** upstream's apierrors.NewInternalError(err): 500 InternalError, "Internal error occurred: <err>". */
function internalError(message: string): ApiError {
  return new ApiError('InternalError', `Internal error occurred: ${message}`, { code: 500, details: { causes: [{ message }] } });
}

/**
 * upstream's ErrCallingWebhook: the call failed or its answer was unusable. failurePolicy
 * decides: Ignore skips the webhook, Fail rejects with an InternalError.
 */
class CallingWebhookError extends Error {
  constructor(readonly webhook: string, reason: string) { super(`failed calling webhook "${webhook}": ${reason}`); }
}

function callingError(name: string, err: unknown): CallingWebhookError {
  const msg = err instanceof Error ? err.message : String(err);
  return new CallingWebhookError(name, err instanceof InvalidWebhookResponse ? `received invalid webhook response: ${msg}` : `failed to call webhook: ${msg}`);
}

async function call(w: Webhook, a: AdmissionAttributes, o: WebhookAdmissionOptions): Promise<AdmissionReviewResponse> {
  try { return await callWebhook(w, admissionReview(a, randomUUID()), o.resolveService); } catch (err) { throw callingError(w.name, err); }
}

/** Runs fn; a CallingWebhookError is ignored (undefined) under failurePolicy Ignore, an InternalError under Fail. */
async function underFailurePolicy<T>(w: Webhook, fn: () => Promise<T>): Promise<T | undefined> {
  try { return await fn(); } catch (err) {
    if (!(err instanceof CallingWebhookError)) throw err;
    if (w.failurePolicy === 'Ignore') return undefined;
    throw internalError(err.message);
  }
}

async function applicable(set: CompiledWebhookSet, source: WebhookSource, a: AdmissionAttributes, o: WebhookAdmissionOptions): Promise<Webhook[]> {
  const hooks = set.update(await source.list());
  if (hooks.length === 0) return [];
  let nsLabels: Record<string, string> | undefined;
  if (a.resource.namespaced && a.namespace && hooks.some((w) => !w.namespaceSelector.empty)) nsLabels = await o.namespaceLabels(a.namespace);
  return hooks.filter((w) => matchesWebhook(w, a, nsLabels)).map((c) => c.webhook);
}

/** Replaces the contents of target with those of source (admission mutates the object in place). */
function replaceContents(target: KubeObject, source: KubeObject): void {
  for (const k of Object.keys(target)) delete (target as Record<string, unknown>)[k];
  Object.assign(target, source);
}

/** The JSON patch operations of a response, or a CallingWebhookError as upstream's DecodePatch failure. */
function decodePatch(w: Webhook, patch: string): unknown[] {
  let ops: unknown;
  try { ops = JSON.parse(Buffer.from(patch, 'base64').toString('utf8')) as unknown; } catch (err) {
    throw new CallingWebhookError(w.name, `received undecodable patch in webhook response: ${(err as Error).message}`);
  }
  if (!Array.isArray(ops) || ops.some((x) => typeof x !== 'object' || x === null || Array.isArray(x))) {
    throw new CallingWebhookError(w.name, 'received undecodable patch in webhook response: json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  }
  return ops;
}

/** Calls one mutating webhook and applies its patch; whether the object changed. */
async function mutateOnce(w: Webhook, a: AdmissionAttributes, o: WebhookAdmissionOptions): Promise<boolean> {
  const resp = await call(w, a, o);
  for (const warning of resp.warnings ?? []) a.warnings?.push(warning);
  if (!resp.allowed) throw denied(w.name, resp.status);
  if (!resp.patch) return false;
  const ops = decodePatch(w, resp.patch);
  if (ops.length === 0) return false;
  if (!a.object || a.operation === 'DELETE') throw internalError(`admission webhook "${w.name}" attempted to modify the object, which is not supported for this operation`);
  if (resp.patchType !== 'JSONPatch') throw new CallingWebhookError(w.name, `unsupported patch type "${resp.patchType}"`);
  const before = JSON.stringify(a.object);
  let next: KubeObject;
  // A patch that does not apply is the apiserver's error (upstream: NewInternalError), whatever the failurePolicy.
  try { next = applyJsonPatch(structuredClone(a.object), ops) as KubeObject; } catch (err) {
    const cause = err instanceof ApiError ? err.details?.causes?.[0]?.message ?? err.message : String(err);
    throw internalError(cause);
  }
  if (typeof next !== 'object' || next === null || Array.isArray(next)) throw internalError(`admission webhook "${w.name}" patched the object into a non-object`);
  replaceContents(a.object, next);
  return JSON.stringify(a.object) !== before;
}

/** The mutating plugin. */
export function mutatingWebhookAdmission(o: WebhookAdmissionOptions): AdmissionPlugin {
  const set = new CompiledWebhookSet();
  return {
    name: 'MutatingAdmissionWebhook',
    handles: (op) => op === 'CREATE' || op === 'UPDATE' || op === 'DELETE' || op === 'CONNECT',
    admit: async (a) => {
      if (exempt(a)) return;
      const hooks = await applicable(set, o.mutating, a, o);
      if (hooks.length === 0) return;
      const run = async (w: Webhook) => (await underFailurePolicy(w, () => mutateOnce(w, a, o))) ?? false;
      let changedAfter = -1;
      for (let i = 0; i < hooks.length; i++) if (await run(hooks[i]!)) changedAfter = i;
      // Reinvocation: IfNeeded webhooks that ran before the last change see the object once more.
      if (changedAfter > 0) {
        for (let i = 0; i < changedAfter; i++) if (hooks[i]!.reinvocationPolicy === 'IfNeeded') await run(hooks[i]!);
      }
    },
  };
}

/** The validating plugin. */
export function validatingWebhookAdmission(o: WebhookAdmissionOptions): AdmissionPlugin {
  const set = new CompiledWebhookSet();
  return {
    name: 'ValidatingAdmissionWebhook',
    handles: (op) => op === 'CREATE' || op === 'UPDATE' || op === 'DELETE' || op === 'CONNECT',
    validate: async (a) => {
      if (exempt(a)) return;
      const hooks = await applicable(set, o.validating, a, o);
      const results = await Promise.all(hooks.map(async (w) => {
        try { return { w, resp: await underFailurePolicy(w, () => call(w, a, o)) }; } catch (err) { return { w, err }; }
      }));
      for (const r of results) {
        if ('err' in r) throw r.err;
        if (!r.resp) continue;
        for (const warning of r.resp.warnings ?? []) a.warnings?.push(warning);
        if (!r.resp.allowed) throw denied(r.w.name, r.resp.status);
      }
    },
  };
}
