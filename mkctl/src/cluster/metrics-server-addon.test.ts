import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pkiPaths } from '@mk8s/component-base/pki';
import { metricsServerArgs, metricsServerFiles, metricsServerObjects } from './metrics-server-addon.js';
import { repoRoot, statePaths } from './paths.js';

const CA = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const objs = metricsServerObjects(repoRoot(), CA);
const byKind = (kind: string, name?: string) => objs.find((o) => o.kind === kind && (!name || o.metadata.name === name)) as unknown as Record<string, never>;

test('the APIService v1beta1.metrics.k8s.io names kube-system/metrics-server:443 and trusts the cluster CA', () => {
  const a = byKind('APIService') as unknown as { metadata: { name: string }; spec: { group: string; version: string; service: { namespace: string; name: string; port: number }; caBundle: string; insecureSkipTLSVerify?: boolean } };
  assert.equal(a.metadata.name, 'v1beta1.metrics.k8s.io');
  assert.deepEqual([a.spec.group, a.spec.version, a.spec.service], ['metrics.k8s.io', 'v1beta1', { name: 'metrics-server', namespace: 'kube-system', port: 443 }]);
  assert.equal(Buffer.from(a.spec.caBundle, 'base64').toString(), CA);
  assert.equal(a.spec.insecureSkipTLSVerify, undefined);
});

test('the Service has no selector; its Endpoints are the host address on the secure port', () => {
  const svc = byKind('Service') as unknown as { spec: { selector?: unknown; ports: { port: number; targetPort: number; name: string }[] } };
  assert.equal(svc.spec.selector, undefined);
  assert.deepEqual(svc.spec.ports.map((p) => [p.name, p.port, p.targetPort]), [['https', 443, 4443]]);
  const ep = byKind('Endpoints') as unknown as { subsets: { addresses: { ip: string }[]; ports: { name: string; port: number }[] }[] };
  assert.deepEqual(ep.subsets, [{ addresses: [{ ip: '10.240.0.1' }], ports: [{ name: 'https', port: 4443, protocol: 'TCP' }] }]);
});

test('RBAC as upstream: system:metrics-server reads nodes/metrics; the aggregated reader joins view/edit/admin', () => {
  const role = byKind('ClusterRole', 'system:metrics-server') as unknown as { rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[] };
  assert.deepEqual(role.rules.map((r) => `${r.resources.join(',')}:${r.verbs.join(',')}`), ['nodes/metrics,nodes/stats:get', 'pods,nodes:get,list,watch']);
  const reader = byKind('ClusterRole', 'system:aggregated-metrics-reader') as unknown as { metadata: { labels: Record<string, string> }; rules: { apiGroups: string[]; verbs: string[] }[] };
  for (const l of ['admin', 'edit', 'view']) assert.equal(reader.metadata.labels[`rbac.authorization.k8s.io/aggregate-to-${l}`], 'true');
  assert.deepEqual(reader.rules[0]?.apiGroups, ['metrics.k8s.io']);
  const bindings = objs.filter((o) => o.kind === 'ClusterRoleBinding') as unknown as { roleRef: { name: string }; subjects: { kind: string; name: string; namespace: string }[] }[];
  assert.deepEqual(bindings.map((b) => b.roleRef.name).sort(), ['system:auth-delegator', 'system:metrics-server']);
  for (const b of bindings) assert.deepEqual(b.subjects, [{ kind: 'ServiceAccount', name: 'metrics-server', namespace: 'kube-system' }]);
});

test('the process verifies kubelets with the cluster CA and trusts only the front proxy for X-Remote-User', () => {
  const p = statePaths();
  const pki = pkiPaths(p.pki, []);
  const args = metricsServerArgs(pki, metricsServerFiles(p));
  const flag = (n: string) => args[args.indexOf(n) + 1];
  assert.equal(flag('--kubelet-certificate-authority'), pki.ca.cert);
  assert.equal(flag('--requestheader-client-ca-file'), pki.frontProxy.ca.cert);
  assert.equal(flag('--requestheader-allowed-names'), 'front-proxy-client');
  assert.equal(flag('--bind-address'), '10.240.0.1');
  assert.ok(!args.includes('--kubelet-insecure-tls'));
});
