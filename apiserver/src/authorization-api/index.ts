/**
 * authorization.k8s.io/v1 SelfSubjectAccessReview, SubjectAccessReview and LocalSubjectAccessReview (pkg/registry/authorization):
 * create-only, never stored; the answer is what the server's authorizer chain decides. Serves
 * `kubectl auth can-i` (protobuf request, JSON answer) and JSON clients.
 */
import { ApiError } from '@mk8s/api';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import yaml from 'js-yaml';
import type { UserInfo } from '../auth/authentication.js';
import { authorize, type AuthorizationAttributes, type Authorizer } from '../auth/authorization.js';
import { decodeAccessReview } from './protobuf.js';
import { sendError } from '../endpoints/status.js';

const BASE = '/apis/authorization.k8s.io/v1';

type Spec = {
  resourceAttributes?: { namespace?: string; verb?: string; group?: string; version?: string; resource?: string; subresource?: string; name?: string };
  nonResourceAttributes?: { path?: string; verb?: string };
  user?: string; groups?: string[]; uid?: string; extra?: Record<string, string[]>;
};

function decodeBody(req: FastifyRequest): Record<string, unknown> {
  const body = req.body as Buffer | undefined;
  if (!body || body.length === 0) throw new ApiError('BadRequest', 'the body of the request is empty');
  const type = (req.headers['content-type'] ?? 'application/json').split(';')[0]!.trim().toLowerCase();
  if (type === 'application/vnd.kubernetes.protobuf') return decodeAccessReview(body);
  try {
    const v = type === 'application/yaml' ? yaml.load(body.toString('utf8')) : JSON.parse(body.toString('utf8'));
    if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error('not an object');
    return v as Record<string, unknown>;
  } catch (err) {
    throw new ApiError('BadRequest', `couldn't decode the request body: ${(err as Error).message}`);
  }
}

/** Attributes a review asks about, for user. Exported for tests. */
export function reviewAttributes(spec: Spec, user: UserInfo, namespaceOverride?: string): AuthorizationAttributes {
  if (spec.resourceAttributes) {
    const r = spec.resourceAttributes;
    return { user, verb: r.verb ?? '', resourceRequest: true, apiGroup: r.group ?? '', apiVersion: r.version ?? '', resource: r.resource ?? '',
      subresource: r.subresource ?? '', namespace: namespaceOverride ?? r.namespace ?? '', name: r.name ?? '' };
  }
  if (spec.nonResourceAttributes) return { user, verb: spec.nonResourceAttributes.verb ?? '', resourceRequest: false, path: spec.nonResourceAttributes.path ?? '' };
  throw new ApiError('Invalid', 'exactly one of nonResourceAttributes or resourceAttributes must be specified', { details: { causes: [{ reason: 'FieldValueRequired', field: 'spec.resourceAttributes', message: 'exactly one of nonResourceAttributes or resourceAttributes must be specified' }] } });
}

export function registerAuthorizationApi(app: FastifyInstance, o: { authorizers: readonly Authorizer[] }): void {
  const answer = async (reply: FastifyReply, kind: string, spec: Spec, user: UserInfo, namespace?: string) => {
    const d = await authorize(o.authorizers, reviewAttributes(spec, user));
    return reply.code(201).type('application/json').send({
      kind, apiVersion: 'authorization.k8s.io/v1', metadata: { ...(namespace ? { namespace } : {}), creationTimestamp: null }, spec,
      status: { allowed: d.allowed, ...(d.reason ? { reason: d.reason } : {}) },
    });
  };
  app.post(`${BASE}/selfsubjectaccessreviews`, async (req, reply) => {
    try {
      const body = decodeBody(req);
      const spec = (body['spec'] ?? {}) as Spec;
      return await answer(reply, 'SelfSubjectAccessReview', spec, req.user);
    } catch (err) { return sendError(reply, err); }
  });
  app.post(`${BASE}/subjectaccessreviews`, async (req, reply) => {
    try {
      const body = decodeBody(req);
      const spec = (body['spec'] ?? {}) as Spec;
      if (!spec.user && !(spec.groups?.length)) {
        throw new ApiError('Invalid', 'SubjectAccessReview.authorization.k8s.io "" is invalid: spec.user: Invalid value: "": at least one of user or group must be specified');
      }
      return await answer(reply, 'SubjectAccessReview', spec, subjectOf(spec));
    } catch (err) { return sendError(reply, err); }
  });
  // LocalSubjectAccessReview: a SubjectAccessReview confined to the URL's namespace (what namespace admins may ask).
  app.post(`${BASE}/namespaces/:namespace/localsubjectaccessreviews`, async (req, reply) => {
    try {
      const namespace = (req.params as { namespace: string }).namespace;
      const body = decodeBody(req);
      const spec = (body['spec'] ?? {}) as Spec;
      const meta = (body['metadata'] ?? {}) as { namespace?: string };
      if (meta.namespace && meta.namespace !== namespace) throw new ApiError('BadRequest', 'the namespace of the provided object does not match the namespace sent on the request');
      const invalid = (field: string, value: unknown, detail: string) => new ApiError('Invalid',
        `LocalSubjectAccessReview.authorization.k8s.io "" is invalid: ${field}: Invalid value: ${JSON.stringify(value)}: ${detail}`,
        { details: { group: 'authorization.k8s.io', kind: 'LocalSubjectAccessReview', causes: [{ reason: 'FieldValueInvalid', field, message: `Invalid value: ${JSON.stringify(value)}: ${detail}` }] } });
      if (spec.nonResourceAttributes) throw invalid('spec.nonResourceAttributes', spec.nonResourceAttributes, 'disallowed on this kind of request');
      if (spec.resourceAttributes && (spec.resourceAttributes.namespace ?? '') !== namespace) {
        throw invalid('spec.resourceAttributes.namespace', spec.resourceAttributes.namespace ?? '', 'must match metadata.namespace');
      }
      if (!spec.user && !(spec.groups?.length)) throw invalid('spec.user', spec.user ?? '', 'at least one of user or group must be specified');
      return await answer(reply, 'LocalSubjectAccessReview', spec, subjectOf(spec), namespace);
    } catch (err) { return sendError(reply, err); }
  });
}

const subjectOf = (spec: Spec): UserInfo =>
  ({ username: spec.user ?? '', groups: spec.groups ?? [], ...(spec.uid ? { uid: spec.uid } : {}), ...(spec.extra ? { extra: spec.extra } : {}) });
