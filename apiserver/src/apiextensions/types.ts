/**
 * apiextensions.k8s.io/v1 CustomResourceDefinition: its descriptor and the fields this server
 * reads (kubernetes-types' shapes, with the schema typed as JSONSchemaProps).
 */
import { ALL_VERBS, type KubeObject, type ResourceDescriptor } from '@mk8s/api';
import type * as ext from 'kubernetes-types/apiextensions/v1.js';
import type { JSONSchemaProps } from './schema.js';

export const CustomResourceDefinitions: ResourceDescriptor<ext.CustomResourceDefinition> = {
  group: 'apiextensions.k8s.io', version: 'v1', kind: 'CustomResourceDefinition', listKind: 'CustomResourceDefinitionList',
  resource: 'customresourcedefinitions', singular: 'customresourcedefinition', namespaced: false,
  shortNames: ['crd', 'crds'], categories: ['api-extensions'], verbs: ALL_VERBS, subresources: ['status'],
};

/** Finalizer the server puts on a CRD being deleted until its objects are gone (upstream's name). */
export const CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';

export interface CrdNames {
  plural: string;
  singular?: string;
  kind: string;
  listKind?: string;
  shortNames?: string[];
  categories?: string[];
}

export interface PrinterColumn {
  name: string;
  type: string;
  format?: string;
  description?: string;
  priority?: number;
  jsonPath: string;
}

export interface ScaleSubresourceSpec {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
}

export interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
  deprecated?: boolean;
  deprecationWarning?: string;
  schema?: { openAPIV3Schema?: JSONSchemaProps };
  subresources?: { status?: Record<string, never>; scale?: ScaleSubresourceSpec };
  additionalPrinterColumns?: PrinterColumn[];
}

export interface CrdCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface CrdSpec {
  group: string;
  names: CrdNames;
  scope: 'Namespaced' | 'Cluster';
  versions: CrdVersion[];
  conversion?: { strategy: string; webhook?: unknown };
  preserveUnknownFields?: boolean;
}

export interface CrdStatus {
  acceptedNames?: CrdNames;
  conditions?: CrdCondition[];
  storedVersions?: string[];
}

export type Crd = KubeObject & { spec: CrdSpec; status?: CrdStatus };

export const conditionOf = (crd: Crd, type: string): CrdCondition | undefined => crd.status?.conditions?.find((c) => c.type === type);
export const isTrue = (crd: Crd, type: string): boolean => conditionOf(crd, type)?.status === 'True';
export const storageVersionOf = (crd: Crd): string | undefined => crd.spec.versions?.find((v) => v.storage)?.name;
