import type { KubeObject, Named, ObjectMeta, Pod as ApiPod, Node as ApiNode, Lease as ApiLease, ConfigMap as ApiConfigMap, Secret as ApiSecret, PersistentVolume as ApiPV, PersistentVolumeClaim as ApiPVC } from '@mk8s/api';

/** An API object as the server returns it, usable with the typed clients. */
export type Obj<T extends { metadata?: ObjectMeta }> = Named<T> & KubeObject;
export type PodObj = Obj<ApiPod>;
export type NodeObj = Obj<ApiNode>;
export type LeaseObj = Obj<ApiLease>;
export type ConfigMapObj = Obj<ApiConfigMap>;
export type SecretObj = Obj<ApiSecret>;
export type PvObj = Obj<ApiPV>;
export type PvcObj = Obj<ApiPVC>;
