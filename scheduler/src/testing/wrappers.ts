/**
 * Builders for pods and nodes in scheduler tests (upstream's st.MakePod()/st.MakeNode()).
 * Plain functions returning API objects; chain by spreading options.
 */
import type { Affinity, Taint, Toleration, TopologySpreadConstraint, OwnerReference } from '@mk8s/api';
import type { Node, Pod } from '../framework/types.js';

export interface PodOptions {
  namespace?: string;
  uid?: string;
  labels?: Record<string, string>;
  nodeName?: string;
  nodeSelector?: Record<string, string>;
  /** Container requests, e.g. { cpu: '500m', memory: '1Gi' } (one container). */
  requests?: Record<string, string>;
  /** Several containers' requests. */
  containers?: Record<string, string>[];
  priority?: number;
  priorityClassName?: string;
  preemptionPolicy?: 'Never' | 'PreemptLowerPriority';
  affinity?: Affinity;
  tolerations?: Toleration[];
  topologySpreadConstraints?: TopologySpreadConstraint[];
  hostPorts?: number[];
  ownerReferences?: OwnerReference[];
  schedulerName?: string;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  nominatedNodeName?: string;
}

export function makePod(name: string, o: PodOptions = {}): Pod {
  const containers = (o.containers ?? [o.requests ?? {}]).map((req, i) => ({
    name: `c${i}`, image: 'busybox',
    ...(Object.keys(req).length ? { resources: { requests: req } } : {}),
    ...(i === 0 && o.hostPorts ? { ports: o.hostPorts.map((p) => ({ containerPort: p, hostPort: p })) } : {}),
  }));
  const pod: Pod = {
    apiVersion: 'v1', kind: 'Pod',
    metadata: {
      name, namespace: o.namespace ?? 'default', uid: o.uid ?? `uid-${o.namespace ?? 'default'}-${name}`,
      ...(o.labels ? { labels: o.labels } : {}),
      ...(o.ownerReferences ? { ownerReferences: o.ownerReferences } : {}),
      ...(o.creationTimestamp ? { creationTimestamp: o.creationTimestamp } : {}),
      ...(o.deletionTimestamp ? { deletionTimestamp: o.deletionTimestamp } : {}),
    },
    spec: {
      containers,
      schedulerName: o.schedulerName ?? 'default-scheduler',
      ...(o.nodeName ? { nodeName: o.nodeName } : {}),
      ...(o.nodeSelector ? { nodeSelector: o.nodeSelector } : {}),
      ...(o.priority !== undefined ? { priority: o.priority } : {}),
      ...(o.priorityClassName ? { priorityClassName: o.priorityClassName } : {}),
      ...(o.preemptionPolicy ? { preemptionPolicy: o.preemptionPolicy } : {}),
      ...(o.affinity ? { affinity: o.affinity } : {}),
      ...(o.tolerations ? { tolerations: o.tolerations } : {}),
      ...(o.topologySpreadConstraints ? { topologySpreadConstraints: o.topologySpreadConstraints } : {}),
    },
    status: { phase: 'Pending', ...(o.nominatedNodeName ? { nominatedNodeName: o.nominatedNodeName } : {}) },
  };
  return pod;
}

export interface NodeOptions {
  labels?: Record<string, string>;
  /** Allocatable (and capacity); defaults to 4 cpu, 8Gi, 110 pods. */
  allocatable?: Record<string, string>;
  taints?: Taint[];
  unschedulable?: boolean;
}

export function makeNode(name: string, o: NodeOptions = {}): Node {
  const allocatable = o.allocatable ?? { cpu: '4', memory: '8Gi', pods: '110' };
  return {
    apiVersion: 'v1', kind: 'Node',
    metadata: { name, uid: `uid-node-${name}`, labels: { 'kubernetes.io/hostname': name, ...o.labels } },
    spec: {
      ...(o.taints ? { taints: o.taints } : {}),
      ...(o.unschedulable ? { unschedulable: true } : {}),
    },
    status: {
      capacity: allocatable, allocatable,
      conditions: [{ type: 'Ready', status: 'True' }],
    },
  };
}
