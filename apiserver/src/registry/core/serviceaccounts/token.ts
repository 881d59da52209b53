/**
 * serviceaccounts/token: the TokenRequest API (upstream pkg/registry/core/serviceaccount/storage
 * token.go). POST a authentication.k8s.io/v1 TokenRequest, get it back with status.token, a JWT
 * bound to the ServiceAccount (and to a Pod or Secret when spec.boundObjectRef names one).
 */
import { ApiError, errors, type KubeObject } from '@mk8s/api';
import type { ServiceAccountTokenIssuer } from '../../../auth/service-account.js';
import type { UserInfo } from '../../../auth/authentication.js';
import { nodeNameOf } from '../../../auth/node.js';
import { forbidden } from '../../../admission/plugins/namespace-lifecycle.js';

type Obj = Record<string, unknown>;

/** Upstream's bounds on spec.expirationSeconds. */
export const MIN_TOKEN_EXPIRATION_SECONDS = 600;
export const MAX_TOKEN_EXPIRATION_SECONDS = 2 ** 32;
export const DEFAULT_TOKEN_EXPIRATION_SECONDS = 3600;
/** What the kubelet asks for in the projected volume; such pod-bound tokens are extended (upstream WarnOnlyBoundTokenExpirationSeconds). */
export const WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS = 3607;
/** The lifetime an extended token really gets: a year (upstream ExpirationExtensionSeconds). */
export const EXPIRATION_EXTENSION_SECONDS = 365 * 24 * 3600;

export interface TokenRequestDeps {
  issuer: ServiceAccountTokenIssuer;
  /** Audiences given to a request that names none (upstream --api-audiences, defaulting to the issuer). */
  defaultAudiences: string[];
  /** Reads by namespace/name; throw NotFound ApiErrors as the stores do. */
  getServiceAccount(namespace: string, name: string): Promise<KubeObject>;
  getPod(namespace: string, name: string): Promise<KubeObject>;
  getSecret(namespace: string, name: string): Promise<KubeObject>;
  /** The bound pod's node, for the node claim; undefined when it cannot be read. @default none: name only */
  getNode?(name: string): Promise<KubeObject | undefined>;
  /**
   * Pod-bound tokens asking for 3607 s get a year, with a warnafter claim at 3607 s, so clients that
   * never reread the file keep working (upstream --service-account-extend-token-expiration). @default true
   */
  extendExpiration?: boolean;
  now(): number;
}

const invalid = (name: string, field: string, value: unknown, why: string) =>
  errors.invalid('TokenRequest', 'authentication.k8s.io', name, [{ reason: 'FieldValueInvalid', field, message: `${field}: Invalid value: ${JSON.stringify(value)}: ${why}` }]);

/**
 * Issues a token for serviceaccounts/<name>/token; returns the TokenRequest to answer with (201).
 * A kubelet (system:node:<n>) only gets tokens bound to a pod scheduled on its node, as upstream's
 * NodeRestriction admission enforces.
 */
export async function createToken(deps: TokenRequestDeps, namespace: string, name: string, body: Obj, user?: UserInfo): Promise<Obj> {
  const meta = (body['metadata'] ?? {}) as Obj;
  if (meta['name'] !== undefined && meta['name'] !== '' && meta['name'] !== name) {
    throw new ApiError('BadRequest', `the name of the object (${String(meta['name'])}) does not match the name on the URL (${name})`);
  }
  const spec = { ...((body['spec'] ?? {}) as Obj) };
  const exp = spec['expirationSeconds'] ?? DEFAULT_TOKEN_EXPIRATION_SECONDS;
  if (typeof exp !== 'number' || !Number.isInteger(exp)) throw invalid(name, 'spec.expirationSeconds', exp, 'must be an integer');
  if (exp < MIN_TOKEN_EXPIRATION_SECONDS) throw invalid(name, 'spec.expirationSeconds', exp, 'may not specify a duration less than 10 minutes');
  if (exp > MAX_TOKEN_EXPIRATION_SECONDS) throw invalid(name, 'spec.expirationSeconds', exp, 'may not specify a duration larger than 2^32 seconds');
  const audiences = Array.isArray(spec['audiences']) && spec['audiences'].length > 0 ? (spec['audiences'] as unknown[]).map(String) : deps.defaultAudiences;

  const requestingNode = user ? nodeNameOf(user) : undefined;
  if (requestingNode !== undefined) await restrictToNode(deps, requestingNode, namespace, name, spec['boundObjectRef'] as Obj | undefined | null);
  const sa = await deps.getServiceAccount(namespace, name);
  let pod: KubeObject | undefined; let secret: KubeObject | undefined;
  const ref = spec['boundObjectRef'] as Obj | undefined | null;
  if (ref) {
    const apiVersion = String(ref['apiVersion'] ?? 'v1'); const kind = String(ref['kind'] ?? '');
    const refName = String(ref['name'] ?? '');
    const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
    let uid: string | undefined;
    if (group === '' && kind === 'Pod') {
      pod = await deps.getPod(namespace, refName);
      const podSA = String(((pod['spec'] ?? {}) as Obj)['serviceAccountName'] ?? '');
      if (podSA !== name) throw new ApiError('BadRequest', `cannot bind token for serviceaccount ${JSON.stringify(name)} to pod running with serviceaccount ${JSON.stringify(podSA)}`);
      uid = pod.metadata.uid;
    } else if (group === '' && kind === 'Secret') {
      secret = await deps.getSecret(namespace, refName);
      uid = secret.metadata.uid;
    } else {
      const version = apiVersion.includes('/') ? apiVersion.slice(apiVersion.indexOf('/') + 1) : apiVersion;
      throw new ApiError('BadRequest', `cannot bind token to object of type ${group ? `${group}/` : ''}${version}, Kind=${kind}`);
    }
    if (ref['uid'] && ref['uid'] !== uid) {
      throw errors.conflict(kind, refName, `the UID in the bound object reference (${String(ref['uid'])}) does not match the UID in record (${uid ?? ''}). The object might have been deleted and then recreated`);
    }
    spec['boundObjectRef'] = { kind, apiVersion, name: refName, uid };
  }
  spec['audiences'] = audiences;
  spec['expirationSeconds'] = exp;
  let node: { name: string; uid?: string } | undefined;
  const nodeName = pod ? ((pod['spec'] ?? {}) as Obj)['nodeName'] : undefined;
  if (typeof nodeName === 'string' && nodeName) {
    const n = await deps.getNode?.(nodeName);
    node = { name: nodeName, ...(n?.metadata.uid ? { uid: n.metadata.uid } : {}) };
  }
  const extend = (deps.extendExpiration ?? true) && pod !== undefined && exp === WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS
    && audiences.every((a) => deps.defaultAudiences.includes(a));
  // The answer still says 3607 s: the kubelet refreshes on that schedule; only the JWT lives longer.
  const token = deps.issuer.issue(sa, {
    audiences, expirationSeconds: extend ? EXPIRATION_EXTENSION_SECONDS : exp,
    ...(extend ? { warnAfterSeconds: exp } : {}), ...(pod ? { pod } : {}), ...(secret ? { secret } : {}), ...(node ? { node } : {}),
  });
  const expiry = Math.floor(deps.now() / 1000) + exp;
  return {
    kind: 'TokenRequest', apiVersion: 'authentication.k8s.io/v1',
    metadata: { name, namespace, creationTimestamp: new Date(deps.now()).toISOString().replace(/\.\d{3}Z$/, 'Z') },
    spec,
    status: { token, expirationTimestamp: new Date(expiry * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z') },
  };
}

async function restrictToNode(deps: TokenRequestDeps, node: string, namespace: string, name: string, ref: Obj | undefined | null): Promise<void> {
  const refuse = (why: string) => forbidden('serviceaccounts', name, why);
  if (!ref || ref['apiVersion'] !== 'v1' || ref['kind'] !== 'Pod' || !ref['name']) throw refuse('node requested token not bound to a pod');
  if (!ref['uid']) throw refuse('node requested token with a pod binding without a uid');
  const pod = await deps.getPod(namespace, String(ref['name']));
  if (pod.metadata.uid !== ref['uid']) {
    throw refuse(`the UID in the bound object reference (${String(ref['uid'])}) does not match the UID in record. The object might have been deleted and then recreated`);
  }
  if (((pod['spec'] ?? {}) as Obj)['nodeName'] !== node) throw refuse('node requested token bound to a pod scheduled on a different node');
}
