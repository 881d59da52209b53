import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { ADDON_MANIFESTS, readManifests } from './addons.js';
import { repoRoot } from './paths.js';

const objs = readManifests(join(repoRoot(), ADDON_MANIFESTS[0]!));
const find = (kind: string) => objs.find((o) => o.kind === kind)!;

test('the DNS add-on: kube-dns at 10.96.0.10 (53/UDP, 53/TCP, 9153), 2 replicas, its own ServiceAccount', () => {
  const svc = find('Service') as unknown as { metadata: { name: string; namespace: string }; spec: { clusterIP: string; ports: { port: number; protocol: string }[] } };
  assert.deepEqual([svc.metadata.namespace, svc.metadata.name, svc.spec.clusterIP], ['kube-system', 'kube-dns', '10.96.0.10']);
  assert.deepEqual(svc.spec.ports.map((p) => `${p.port}/${p.protocol}`), ['53/UDP', '53/TCP', '9153/TCP']);
  const d = find('Deployment') as unknown as { spec: { replicas: number; template: { spec: { serviceAccountName: string; dnsPolicy: string } } } };
  assert.equal(d.spec.replicas, 2);
  assert.equal(d.spec.template.spec.serviceAccountName, 'coredns');
  assert.equal(d.spec.template.spec.dnsPolicy, 'Default', 'its own resolv.conf does not point at itself');
});

test('the ClusterRole only lists and watches what cluster-dns reads', () => {
  const role = find('ClusterRole') as unknown as { rules: { resources: string[]; verbs: string[] }[] };
  assert.deepEqual(role.rules.flatMap((r) => r.resources).sort(), ['endpointslices', 'namespaces', 'pods', 'services']);
  for (const r of role.rules) assert.deepEqual(r.verbs, ['list', 'watch']);
});
