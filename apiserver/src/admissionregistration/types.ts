/**
 * admissionregistration.k8s.io/v1 Validating- and MutatingWebhookConfiguration: descriptors,
 * the fields this server reads, defaulting and validation (upstream's SetDefaults_* and
 * ValidateValidatingWebhookConfiguration, in part).
 */
import { ALL_VERBS, field, isDNS1123Subdomain, type FieldError, type KubeObject, type LabelSelector, type ResourceDescriptor } from '@mk8s/api';
import type { RestStrategy } from '../registry/generic/strategy.js';

const descriptor = (kind: string, resource: string): ResourceDescriptor => ({
  group: 'admissionregistration.k8s.io', version: 'v1', kind, listKind: `${kind}List`, resource, singular: resource.slice(0, -1),
  namespaced: false, shortNames: [], categories: ['api-extensions'], verbs: ALL_VERBS, subresources: [],
});
export const ValidatingWebhookConfigurations = descriptor('ValidatingWebhookConfiguration', 'validatingwebhookconfigurations');
export const MutatingWebhookConfigurations = descriptor('MutatingWebhookConfiguration', 'mutatingwebhookconfigurations');

export interface RuleWithOperations {
  operations?: string[];
  apiGroups?: string[];
  apiVersions?: string[];
  resources?: string[];
  scope?: '*' | 'Cluster' | 'Namespaced';
}

export interface WebhookClientConfig {
  url?: string;
  service?: { namespace: string; name: string; path?: string; port?: number };
  caBundle?: string;
}

export interface Webhook {
  name: string;
  clientConfig: WebhookClientConfig;
  rules?: RuleWithOperations[];
  failurePolicy?: 'Fail' | 'Ignore';
  matchPolicy?: 'Exact' | 'Equivalent';
  namespaceSelector?: LabelSelector;
  objectSelector?: LabelSelector;
  sideEffects?: string;
  timeoutSeconds?: number;
  admissionReviewVersions?: string[];
  /** Mutating webhooks only. */
  reinvocationPolicy?: 'Never' | 'IfNeeded';
}

export type WebhookConfiguration = KubeObject & { webhooks?: Webhook[] };

/** SetDefaults: failurePolicy Fail, matchPolicy Equivalent, selectors {}, timeout 10 s, scope *, reinvocation Never. */
export function defaultWebhooks(obj: WebhookConfiguration, mutating: boolean): void {
  for (const w of obj.webhooks ?? []) {
    w.failurePolicy ??= 'Fail';
    w.matchPolicy ??= 'Equivalent';
    w.namespaceSelector ??= {};
    w.objectSelector ??= {};
    w.timeoutSeconds ??= 10;
    if (mutating) w.reinvocationPolicy ??= 'Never';
    for (const r of w.rules ?? []) r.scope ??= '*';
  }
}

const OPERATIONS = ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE'];

export function validateWebhooks(obj: WebhookConfiguration, mutating: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  (obj.webhooks ?? []).forEach((w, i) => {
    const b = `webhooks[${i}]`;
    if (!w.name) errs.push(field.required(`${b}.name`));
    else {
      for (const m of isDNS1123Subdomain(w.name)) errs.push(field.invalid(`${b}.name`, w.name, m));
      if (w.name.split('.').length < 3) errs.push(field.invalid(`${b}.name`, w.name, 'should be a domain with at least three segments separated by dots'));
      if (names.has(w.name)) errs.push(field.duplicate(`${b}.name`, w.name));
      names.add(w.name);
    }
    const cc = w.clientConfig ?? {};
    if (!!cc.url === !!cc.service) errs.push(field.required(`${b}.clientConfig`, 'exactly one of url or service is required'));
    if (cc.url) {
      let u: URL | undefined;
      try { u = new URL(cc.url); } catch { errs.push(field.invalid(`${b}.clientConfig.url`, cc.url, 'must be a valid URL')); }
      if (u && u.protocol !== 'https:') errs.push(field.invalid(`${b}.clientConfig.url`, cc.url, "'https' is the only allowed URL scheme"));
    }
    if (cc.service && (!cc.service.name || !cc.service.namespace)) errs.push(field.required(`${b}.clientConfig.service`, 'namespace and name are required'));
    if (!w.sideEffects) errs.push(field.required(`${b}.sideEffects`, 'must specify one of None, NoneOnDryRun'));
    else if (!['None', 'NoneOnDryRun'].includes(w.sideEffects)) errs.push(field.notSupported(`${b}.sideEffects`, w.sideEffects, ['None', 'NoneOnDryRun']));
    if (!w.admissionReviewVersions?.length) errs.push(field.required(`${b}.admissionReviewVersions`, 'must specify one of v1, v1beta1'));
    else if (!w.admissionReviewVersions.some((v) => v === 'v1' || v === 'v1beta1')) errs.push(field.invalid(`${b}.admissionReviewVersions`, w.admissionReviewVersions, 'must include at least one of v1, v1beta1'));
    if (w.failurePolicy && !['Fail', 'Ignore'].includes(w.failurePolicy)) errs.push(field.notSupported(`${b}.failurePolicy`, w.failurePolicy, ['Fail', 'Ignore']));
    if (w.timeoutSeconds !== undefined && (w.timeoutSeconds < 1 || w.timeoutSeconds > 30)) errs.push(field.invalid(`${b}.timeoutSeconds`, w.timeoutSeconds, 'the timeout value must be between 1 and 30 seconds'));
    if (mutating && w.reinvocationPolicy && !['Never', 'IfNeeded'].includes(w.reinvocationPolicy)) errs.push(field.notSupported(`${b}.reinvocationPolicy`, w.reinvocationPolicy, ['IfNeeded', 'Never']));
    (w.rules ?? []).forEach((r, j) => {
      for (const op of r.operations ?? []) if (!OPERATIONS.includes(op)) errs.push(field.notSupported(`${b}.rules[${j}].operations`, op, OPERATIONS));
      if (!r.resources?.length) errs.push(field.required(`${b}.rules[${j}].resources`));
    });
  });
  return errs;
}

const strategy = (resource: ResourceDescriptor, mutating: boolean): RestStrategy => ({
  resource,
  tracksGeneration: true,
  prepareForCreate: (obj) => defaultWebhooks(obj as WebhookConfiguration, mutating),
  prepareForUpdate: (obj) => defaultWebhooks(obj as WebhookConfiguration, mutating),
  validate: (obj) => validateWebhooks(obj as WebhookConfiguration, mutating),
  validateUpdate: (obj) => validateWebhooks(obj as WebhookConfiguration, mutating),
});
export const validatingWebhookStrategy = strategy(ValidatingWebhookConfigurations, false);
export const mutatingWebhookStrategy = strategy(MutatingWebhookConfigurations, true);
