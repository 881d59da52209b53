import assert from 'node:assert/strict';
import { test } from 'node:test';
import { componentInstances, nodeLossHandled, describeChanges, faultSignals, isConverged, leaderFromMetrics, nodeProcesses, parseSeconds, needsEtcdFacts, resolveTarget, type ClusterFacts, type Observation } from './targets.js';

const facts: ClusterFacts = {
  processes: ['apiserver', 'controller-manager', 'etcd-1', 'etcd-2', 'etcd-3', 'node-1-cri-docker', 'node-1-kube-proxy', 'node-1-kubelet', 'node-2-kubelet', 'scheduler'],
  etcdLeader: 'etcd-2', etcdFollowers: ['etcd-3', 'etcd-1'],
  leases: { 'controller-manager': { holder: 'host_1', valid: true }, scheduler: { holder: 'host_2', valid: false } },
};

for (const tc of [
  { target: 'etcd-3', want: { names: ['etcd-3'] } },
  { target: 'etcd-leader', want: { names: ['etcd-2'] } },
  { target: 'etcd-follower', want: { names: ['etcd-1'] } },
  { target: 'apiserver', want: { names: ['apiserver'] } },
  { target: 'controller-manager-leader', want: { names: ['controller-manager'] } },
  { target: 'scheduler-leader', want: { error: 'no scheduler holds its leader Lease now' } },
  { target: 'kubelet/node-1', want: { names: ['node-1-kubelet'] } },
  { target: 'cri/node-1', want: { names: ['node-1-cri-docker'] } },
  { target: 'proxy/node-1', want: { names: ['node-1-kube-proxy'] } },
  { target: 'proxy/node-2', want: { error: 'no kube-proxy of node node-2 is supervised' } },
  { target: 'node/node-1', want: { names: ['node-1-cri-docker', 'node-1-kube-proxy', 'node-1-kubelet'] } },
  { target: 'kubelet/node-9', want: { error: 'no kubelet of node node-9 is supervised' } },
]) test(`resolveTarget(${tc.target})`, () => assert.deepEqual(resolveTarget(tc.target, facts), tc.want));

test('resolveTarget: apiserver names one of N (the first), apiserver-<i> that one', () => {
  const ha: ClusterFacts = { ...facts, processes: ['apiserver-10', 'apiserver-2', 'apiserver-0', 'apiserver-1', 'haproxy', 'etcd-1'] };
  assert.deepEqual(resolveTarget('apiserver', ha), { names: ['apiserver-0'] });
  assert.deepEqual(resolveTarget('apiserver-1', ha), { names: ['apiserver-1'] });
  assert.deepEqual(resolveTarget('haproxy', ha), { names: ['haproxy'] });
  assert.deepEqual(resolveTarget('apiserver', { ...facts, processes: ['etcd-1'] }), { error: 'no apiserver is supervised' });
});

test('resolveTarget: no leader, and an unknown target, are errors naming what exists', () => {
  assert.deepEqual(resolveTarget('etcd-leader', { ...facts, etcdLeader: undefined }), { error: 'etcd has no leader now' });
  const r = resolveTarget('dockerd', facts);
  assert.ok('error' in r && /unknown target dockerd: a process \(apiserver, .*\) or a role \(etcd-leader, /.test(r.error));
});

test('faultSignals: kill, stop for N seconds, restart', () => {
  assert.deepEqual(faultSignals('kill', 5), [{ signal: 'SIGKILL', afterMs: 0 }]);
  assert.deepEqual(faultSignals('stop', 5), [{ signal: 'SIGSTOP', afterMs: 0 }, { signal: 'SIGCONT', afterMs: 5000 }]);
  assert.deepEqual(faultSignals('restart', 5), [{ signal: 'SIGTERM', afterMs: 0 }]);
});

const healthy: Observation = {
  processes: { 'etcd-1': 'running pid 10', apiserver: 'running pid 11' }, apiserverReady: true, etcdLeader: 'etcd-1',
  leases: { 'kube-controller-manager': 'h_1' }, nodes: { 'node-1': 'True' }, deployments: { 'default/web': '2/2' },
};

test('describeChanges names each change, one line each', () => {
  const next: Observation = { ...healthy, processes: { 'etcd-1': 'backoff', apiserver: 'running pid 11' }, apiserverReady: false, etcdLeader: undefined, nodes: { 'node-1': 'Unknown' }, deployments: { 'default/web': '1/2' } };
  assert.deepEqual(describeChanges(healthy, next), [
    'process etcd-1: running pid 10 -> backoff',
    'apiserver /readyz: FAILING',
    'etcd leader: etcd-1 -> none',
    'node Ready node-1: True -> Unknown',
    'deployment default/web: 2/2 -> 1/2',
  ]);
  assert.deepEqual(describeChanges(healthy, healthy), []);
});

for (const tc of [
  { name: 'a healthy cluster', o: healthy, want: true },
  { name: 'a process in back-off', o: { ...healthy, processes: { 'etcd-1': 'backoff' } }, want: false },
  { name: 'no etcd leader', o: { ...healthy, etcdLeader: undefined }, want: false },
  { name: 'a lease without holder', o: { ...healthy, leases: { 'kube-scheduler': undefined } }, want: false },
  { name: 'a node not Ready', o: { ...healthy, nodes: { 'node-1': 'Unknown' } }, want: false },
  { name: 'a Deployment short of replicas', o: { ...healthy, deployments: { 'default/web': '1/2' } }, want: false },
] as const) test(`isConverged: ${tc.name}`, () => assert.equal(isConverged(tc.o as Observation), tc.want));

test('isConverged with a baseline waits only for what was healthy before the fault', () => {
  const base: Observation = { ...healthy, nodes: { 'node-1': 'True', 'node-2': 'False' }, deployments: { 'default/web': '2/2', 'other/broken': '0/1' } };
  assert.equal(isConverged({ ...base, deployments: { 'default/web': '2/2', 'other/broken': '0/1' } }, base), true);
  assert.equal(isConverged({ ...base, deployments: { 'default/web': '1/2', 'other/broken': '0/1' } }, base), false);
  assert.equal(isConverged({ ...base, nodes: { 'node-1': 'Unknown', 'node-2': 'False' } }, base), false);
  assert.equal(isConverged({ ...base, deployments: { 'other/broken': '0/1' } }, base), true, 'a Deployment deleted meanwhile is not waited for');
});

test('leader roles with two instances: the one whose /metrics reports leading', () => {
  const two: ClusterFacts = { ...facts, processes: [...facts.processes, 'controller-manager-2', 'scheduler-2'], leases: { 'controller-manager': { holder: 'h_x', valid: true }, scheduler: { holder: 'h_y', valid: true } } };
  assert.deepEqual(resolveTarget('controller-manager-leader', { ...two, leaders: { 'controller-manager': 'controller-manager-2' } }), { names: ['controller-manager-2'] });
  assert.deepEqual(resolveTarget('scheduler-leader', { ...two, leaders: { scheduler: 'scheduler' } }), { names: ['scheduler'] });
  assert.deepEqual(resolveTarget('scheduler-leader', two), { error: 'none of scheduler, scheduler-2 reports leading the scheduler Lease (held by h_y)' });
  assert.deepEqual(resolveTarget('controller-manager-leader', { ...two, leaders: { 'controller-manager': 'controller-manager-9' } }), { error: 'none of controller-manager, controller-manager-2 reports leading the controller-manager Lease (held by h_x)' });
  assert.deepEqual(componentInstances('controller-manager', ['controller-manager-2', 'controller-manager', 'controller-manager-x', 'scheduler']), ['controller-manager', 'controller-manager-2']);
});

test('leaderFromMetrics reads leader_election_master_status for the lease', () => {
  const text = '# HELP leader_election_master_status x\n# TYPE leader_election_master_status gauge\nleader_election_master_status{name="kube-scheduler"} 0\nleader_election_master_status{name="kube-controller-manager"} 1\n';
  assert.equal(leaderFromMetrics(text, 'kube-controller-manager'), true);
  assert.equal(leaderFromMetrics(text, 'kube-scheduler'), false);
  assert.equal(leaderFromMetrics('process_cpu_seconds_total 3\n', 'kube-scheduler'), undefined);
});

test('nodeProcesses: the kubelet, shim and kube-proxy of that node only', () => {
  assert.deepEqual(nodeProcesses('node-1', facts.processes), ['node-1-cri-docker', 'node-1-kube-proxy', 'node-1-kubelet']);
  assert.deepEqual(nodeProcesses('node-1', ['node-10-kubelet', 'node-1-kubelet']), ['node-1-kubelet']);
  assert.deepEqual(nodeProcesses('node-3', facts.processes), []);
});

for (const tc of [['60', 60], ['60s', 60], ['2m', 120], ['1m30s', 90], ['500ms', 0.5], ['1h', 3600]] as const) {
  test(`parseSeconds(${tc[0]})`, () => assert.equal(parseSeconds('--for', tc[0]), tc[1]));
}
for (const bad of ['', 'soon', '10x', '-5s', '5s junk']) {
  test(`parseSeconds refuses ${JSON.stringify(bad)}`, () => assert.throws(() => parseSeconds('--for', bad), /invalid --for/));
}

test('describeChanges: taints, evictions and replacement pods', () => {
  const a: Observation = { ...healthy, taints: { 'node-1': 'none' }, pods: { 'default/web-a': 'node-1 Running' } };
  const b: Observation = { ...healthy, taints: { 'node-1': 'node.kubernetes.io/unreachable:NoExecute,node.kubernetes.io/unreachable:NoSchedule' }, pods: { 'default/web-a': 'node-1 Terminating', 'default/web-b': 'node-2 Pending' } };
  assert.deepEqual(describeChanges(a, b), [
    'node taints node-1: none -> node.kubernetes.io/unreachable:NoExecute,node.kubernetes.io/unreachable:NoSchedule',
    'pod default/web-a: node-1 Running -> node-1 Terminating',
    'pod default/web-b: - -> node-2 Pending',
  ]);
});

test('nodeLossHandled: the node noticed NotReady and its pods (outside kube-system) evicted', () => {
  const o = (ready: string, pods: Record<string, string>): Observation => ({ ...healthy, nodes: { 'node-1': ready, 'node-2': 'True' }, pods });
  assert.equal(nodeLossHandled(o('True', {}), ['node-1']), false, 'not noticed yet');
  assert.equal(nodeLossHandled(o('Unknown', { 'default/a': 'node-1 Running', 'default/b': 'node-2 Running' }), ['node-1']), false, 'a pod still there');
  assert.equal(nodeLossHandled(o('Unknown', { 'default/a': 'node-1 Terminating', 'default/b': 'node-2 Running' }), ['node-1']), true);
  assert.equal(nodeLossHandled(o('Unknown', { 'default/a': 'node-10 Running' }), ['node-1']), true, 'node-10 is another node');
});

test('needsEtcdFacts: only the etcd roles ask etcd who leads; a named member is signalled at once', () => {
  for (const [target, want] of [['etcd-leader', true], ['etcd-follower', true], ['etcd-1', false], ['etcd-3', false], ['apiserver', false], ['kubelet/node-1', false]] as const) {
    assert.equal(needsEtcdFacts(target), want, target);
  }
});
