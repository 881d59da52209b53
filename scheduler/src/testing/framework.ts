/** A framework wired to in-memory fakes for plugin and scheduler unit tests. */
import { silentLogger } from '@mk8s/component-base';
import { FakeClock } from '@mk8s/component-base/testing';
import type { Clientset } from '@mk8s/client';
import type { ReplicaSet, Service } from '@mk8s/api';
import { Framework, type ProfileConfig } from '../framework/framework.js';
import type { Handle, PodNominator, VolumeListers } from '../framework/interfaces.js';
import { NodeInfo, PodInfo, Snapshot, type Node, type Pod } from '../framework/types.js';
import { IN_TREE_REGISTRY } from '../plugins/registry.js';

export interface TestHandleOptions {
  client?: Clientset;
  namespaceLabels?: Record<string, Record<string, string>>;
  services?: Service[];
  replicaSets?: ReplicaSet[];
  nominated?: Record<string, Pod[]>;
  events?: { type: string; reason: string; message: string; pod: string }[];
  volumes?: VolumeListers;
}

export function testHandle(o: TestHandleOptions = {}): Omit<Handle, 'framework'> {
  const nominator: PodNominator = { nominatedPodsForNode: (n) => o.nominated?.[n] ?? [] };
  return {
    logger: silentLogger(),
    clock: new FakeClock(),
    client: o.client,
    namespaceLabels: (ns) => o.namespaceLabels?.[ns] ?? {},
    services: (ns) => (o.services ?? []).filter((s) => (s.metadata?.namespace ?? 'default') === ns),
    replicaSets: (ns) => (o.replicaSets ?? []).filter((s) => (s.metadata?.namespace ?? 'default') === ns),
    nominator,
    ...(o.volumes ? { volumes: o.volumes } : {}),
    recordEvent: (pod, type, reason, _action, message) => { o.events?.push({ type, reason, message, pod: `${pod.metadata.namespace}/${pod.metadata.name}` }); },
  };
}

export function newTestFramework(profile: ProfileConfig = {}, o: TestHandleOptions = {}): Framework {
  return new Framework({ registry: IN_TREE_REGISTRY, profile, handle: testHandle(o) });
}

/** A snapshot of nodes with pods placed by their spec.nodeName. */
export function snapshotOf(nodes: Node[], pods: Pod[] = []): Snapshot {
  const infos = nodes.map((n) => new NodeInfo(n));
  const byName = new Map(infos.map((i) => [i.name, i]));
  for (const p of pods) byName.get(p.spec?.nodeName ?? '')?.addPod(new PodInfo(p));
  return new Snapshot(infos);
}
