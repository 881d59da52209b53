/**
 * The component schemas of the served kinds (generated from kubernetes-types by
 * generate-schemas.ts) and the naming rules that tie a ResourceDescriptor to them.
 */
import type { ResourceDescriptor } from '@mk8s/api';
import { SCHEMAS_JSON } from './schemas.generated.js';

export type Schema = Record<string, unknown>;

const GENERATED = (JSON.parse(SCHEMAS_JSON) as { schemas: Record<string, Schema> }).schemas;

/** Upstream's definition prefix for a group/version: io.k8s.api.apps.v1, io.k8s.api.core.v1, … */
export function definitionPrefix(group: string, version: string): string {
  // rbac.authorization.k8s.io's Go package is k8s.io/api/rbac, hence io.k8s.api.rbac.v1.
  const pkg = group === '' ? 'core' : group === 'rbac.authorization.k8s.io' ? 'rbac' : group.replace(/\.k8s\.io$/, '');
  return `io.k8s.api.${pkg}.${version}`;
}

/** The definition name of a kind: io.k8s.api.apps.v1.Deployment. */
export const definitionName = (group: string, version: string, kind: string): string => `${definitionPrefix(group, version)}.${kind}`;

export const REF_PREFIX = '#/components/schemas/';
export const PATCH_SCHEMA = 'io.k8s.apimachinery.pkg.apis.meta.v1.Patch';
export const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';
export const LIST_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta';

const EXTRA: Record<string, Schema> = {
  [PATCH_SCHEMA]: { description: 'Patch is provided to give a concrete name and type to the Kubernetes PATCH request body.', type: 'object' },
};

/** A schema by definition name, or undefined. The returned object is shared: never mutate it. */
export function lookupSchema(name: string): Schema | undefined {
  return GENERATED[name] ?? EXTRA[name];
}

/** A kind nobody generated a schema for (e.g. an aggregated group): any fields, standard metadata. */
export function permissiveKindSchema(kind: string): Schema {
  return {
    description: `${kind} (schema not published by this server).`,
    type: 'object',
    properties: {
      apiVersion: { type: 'string', description: 'APIVersion defines the versioned schema of this representation of an object.' },
      kind: { type: 'string', description: 'Kind is a string value representing the REST resource this object represents.' },
      metadata: { allOf: [{ $ref: REF_PREFIX + OBJECT_META }], description: 'Standard object metadata.' },
    },
    'x-kubernetes-preserve-unknown-fields': true,
  };
}

/** The schema name of a resource's kind (permissive if none was generated). */
export function kindSchemaName(r: Pick<ResourceDescriptor, 'group' | 'version' | 'kind'>): string {
  return definitionName(r.group, r.version, r.kind);
}
