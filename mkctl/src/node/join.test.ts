import { test } from 'node:test';
import assert from 'node:assert/strict';
import { load } from 'js-yaml';
import { nodeComponentSpecs, nodePaths, renderNodeKubeconfig, stateDirFor } from './join.js';

test('the node kubeconfig carries the server and the token as a bearer token', () => {
  const cfg = load(renderNodeKubeconfig({ server: 'http://10.240.0.1:6443', nodeName: 'n1', token: 't0k' })) as {
    clusters: { cluster: { server: string } }[]; users: { name: string; user: { token?: string } }[]; 'current-context': string;
  };
  assert.equal(cfg.clusters[0]?.cluster.server, 'http://10.240.0.1:6443');
  assert.deepEqual(cfg.users[0], { name: 'system:node:n1', user: { token: 't0k' } });
  assert.equal(cfg['current-context'], 'mk8s');
});

test('without a token the user has no credentials', () => {
  const cfg = load(renderNodeKubeconfig({ server: 'http://x:1', nodeName: 'n1' })) as { users: { user: object }[] };
  assert.deepEqual(cfg.users[0]?.user, {});
});

test('the state dir defaults under /var/lib/mk8s-node', () => {
  assert.equal(stateDirFor('n1'), '/var/lib/mk8s-node/n1');
  assert.equal(stateDirFor('n1', '/tmp/s'), '/tmp/s');
});

test('components get the local launcher flags, pointed at the state dir', () => {
  const paths = nodePaths('/s');
  const [shim, kubelet, proxy] = nodeComponentSpecs({ root: '/r', nodeName: 'n1', nodeIp: '10.0.0.5', clusterCidr: '10.244.0.0/16', paths });
  assert.deepEqual([shim?.name, kubelet?.name, proxy?.name], ['cri-docker', 'kubelet', 'kube-proxy']);
  assert.deepEqual(shim?.args.slice(0, 5), ['/r/cri-docker/dist/main.js', '--socket', '/s/cri.sock', '--node-name', 'n1']);
  const k = kubelet?.args ?? [];
  assert.equal(k[k.indexOf('--node-ip') + 1], '10.0.0.5');
  assert.equal(k[k.indexOf('--container-runtime-endpoint') + 1], 'unix:///s/cri.sock');
  assert.equal(k[k.indexOf('--kubeconfig') + 1], '/s/kubeconfig');
  const p = proxy?.args ?? [];
  assert.ok(p.includes('--route-agent'));
  assert.equal(p[p.indexOf('--cni-conf-dir') + 1], '/s/cni/net.d');
  assert.equal(p[p.indexOf('--cluster-cidr') + 1], '10.244.0.0/16');
});
