/**
 * Strategic-merge-patch metadata per kind: which lists merge, by which key, and where
 * $retainKeys applies. Derived from the `patchStrategy`/`patchMergeKey` struct tags of
 * k8s.io/api (core/v1, apps/v1, meta/v1) for the fields of the kinds mk8s serves. Fields not
 * listed are maps (merged) or atomic lists (replaced), as upstream treats untagged fields.
 */

export type PatchStrategy = 'merge' | 'replace' | 'retainKeys' | 'merge,retainKeys';

/** Patch metadata of one field. For lists, `fields` describes the elements; for structs, the struct. */
export interface PatchMeta {
  readonly strategy?: PatchStrategy;
  readonly mergeKey?: string;
  readonly fields?: PatchSchema;
}
export type PatchSchema = Readonly<Record<string, PatchMeta>>;

const merge = (mergeKey?: string, fields?: PatchSchema): PatchMeta =>
  ({ strategy: 'merge', ...(mergeKey ? { mergeKey } : {}), ...(fields ? { fields } : {}) });

export const OBJECT_META: PatchSchema = {
  finalizers: merge(),
  ownerReferences: merge('uid'),
};

const CONTAINER: PatchSchema = {
  ports: merge('containerPort'),
  env: merge('name'),
  volumeMounts: merge('mountPath'),
  volumeDevices: merge('devicePath'),
};

export const POD_SPEC: PatchSchema = {
  volumes: { strategy: 'merge,retainKeys', mergeKey: 'name' },
  initContainers: merge('name', CONTAINER),
  containers: merge('name', CONTAINER),
  ephemeralContainers: merge('name', CONTAINER),
  imagePullSecrets: merge('name'),
  hostAliases: merge('ip'),
  topologySpreadConstraints: merge('topologyKey'),
  schedulingGates: merge('name'),
  resourceClaims: { strategy: 'merge,retainKeys', mergeKey: 'name' },
};

const POD_STATUS: PatchSchema = {
  conditions: merge('type'),
  podIPs: merge('ip'),
  hostIPs: merge('ip'),
  resourceClaimStatuses: { strategy: 'merge,retainKeys', mergeKey: 'name' },
};

export const POD_TEMPLATE_SPEC: PatchSchema = { metadata: { fields: OBJECT_META }, spec: { fields: POD_SPEC } };

const CONDITIONS_STATUS: PatchSchema = { conditions: merge('type') };
const meta = { metadata: { fields: OBJECT_META } } as const;

/** Patch schemas by `group/resource`. Resources not listed use GENERIC. */
export const PATCH_SCHEMAS: Readonly<Record<string, PatchSchema>> = {
  '/pods': { ...meta, spec: { fields: POD_SPEC }, status: { fields: POD_STATUS } },
  '/services': { ...meta, spec: { fields: { ports: merge('port') } }, status: { fields: CONDITIONS_STATUS } },
  '/nodes': { ...meta, spec: { fields: { podCIDRs: merge() } }, status: { fields: { conditions: merge('type'), addresses: merge('type') } } },
  '/namespaces': { ...meta, status: { fields: CONDITIONS_STATUS } },
  '/serviceaccounts': { ...meta, secrets: merge('name') },
  'apps/deployments': {
    ...meta,
    spec: { fields: { template: { fields: POD_TEMPLATE_SPEC }, strategy: { strategy: 'retainKeys' } } },
    status: { fields: CONDITIONS_STATUS },
  },
  'apps/replicasets': { ...meta, spec: { fields: { template: { fields: POD_TEMPLATE_SPEC } } }, status: { fields: CONDITIONS_STATUS } },
  'apps/daemonsets': { ...meta, spec: { fields: { template: { fields: POD_TEMPLATE_SPEC } } }, status: { fields: CONDITIONS_STATUS } },
  'apps/statefulsets': { ...meta, spec: { fields: { template: { fields: POD_TEMPLATE_SPEC } } }, status: { fields: CONDITIONS_STATUS } },
  'batch/jobs': { ...meta, spec: { fields: { template: { fields: POD_TEMPLATE_SPEC } } }, status: { fields: CONDITIONS_STATUS } },
  'batch/cronjobs': { ...meta, spec: { fields: { jobTemplate: { fields: { metadata: { fields: OBJECT_META }, spec: { fields: { template: { fields: POD_TEMPLATE_SPEC } } } } } } } },
};

/** Any other kind: only ObjectMeta's tags. */
export const GENERIC: PatchSchema = meta;

/** The schema for a resource. */
export function patchSchemaFor(resource: { group: string; resource: string }): PatchSchema {
  return PATCH_SCHEMAS[`${resource.group}/${resource.resource}`] ?? GENERIC;
}
