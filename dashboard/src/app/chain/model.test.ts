import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TRACE_KINDS, type Link } from '@mk8s/api/trace';
import { chainModel, logsOf, stepLabel, traceKindOf } from './model';

const ok = (step: string, evidence = step): Link => ({ step, status: 'ok', evidence });

test('a healthy chain: every link ok, nothing flagged, kube-proxy info is not a failure', () => {
  const links = ['stored', 'replicaset', 'pods', 'scheduled', 'node', 'image', 'started', 'ready', 'endpoints'].map((s) => ok(s));
  links.push({ step: 'kube-proxy', status: 'info', evidence: 'not visible from the API' });
  const m = chainModel('Deployment', links);
  assert.equal(m.verdict, 'ok');
  assert.equal(m.summary, 'Every link is ok');
  assert.equal(m.firstBroken, undefined);
  assert.deepEqual(m.links.map((l) => `${l.step}:${l.status}:${l.statusText}`).slice(-2), ['endpoints:ok:OK', 'kube-proxy:info:Info']);
  assert.ok(m.links.every((l) => !l.firstBroken && l.logs.length === 0));
});

test('a chain broken at image: flagged, with owner and logs; the steps after it are not reached', () => {
  const m = chainModel('Pod', [ok('stored'), ok('scheduled'), ok('node'), {
    step: 'image', status: 'broken', evidence: 'web/web: ErrImagePull for mk8s/does-not-exist:1: pull access denied',
    owner: 'container runtime (kubelet → cri-docker → Docker)', hint: 'no registry is reachable: the image must exist locally',
  }]);
  assert.equal(m.verdict, 'broken');
  assert.equal(m.firstBroken?.step, 'image');
  assert.equal(m.summary, 'Broken at image: owned by container runtime (kubelet → cri-docker → Docker)');
  assert.deepEqual(m.links.map((l) => `${l.step}:${l.status}`), ['stored:ok', 'scheduled:ok', 'node:ok', 'image:broken', 'started:unreached', 'ready:unreached', 'endpoints:unreached', 'kube-proxy:unreached']);
  assert.deepEqual(m.links.filter((l) => l.firstBroken).map((l) => l.step), ['image']);
  assert.equal(m.links[4]!.statusText, 'Not reached');
});

test('a waiting link: pending verdict, no broken flag, unreached tail', () => {
  const m = chainModel('Deployment', [ok('stored'), ok('replicaset'), ok('pods'), { step: 'scheduled', status: 'waiting', evidence: 'no node yet', owner: 'kube-scheduler', hint: 'is the scheduler running? mkctl cluster status; .mk8s/logs/scheduler.log' }]);
  assert.equal(m.verdict, 'pending');
  assert.equal(m.summary, 'Pending at scheduled: waiting on kube-scheduler');
  assert.equal(m.firstBroken, undefined);
  assert.deepEqual(m.links[3]!.logs, ['.mk8s/logs/scheduler.log']);
  assert.equal(m.links.at(-1)!.step, 'kube-proxy');
});

test('a sandbox failure stands for the image step: image and later are not reached', () => {
  const m = chainModel('Pod', [ok('stored'), ok('scheduled'), ok('node'), { step: 'sandbox', status: 'broken', evidence: 'x', owner: 'container runtime on node-1 (kubelet → cri-docker → Docker) / CNI: the pod sandbox', hint: '.mk8s/logs/node-1-cri-docker.log; the pod' }]);
  assert.deepEqual(m.links.map((l) => l.step), ['stored', 'scheduled', 'node', 'sandbox', 'image', 'started', 'ready', 'endpoints', 'kube-proxy']);
  assert.deepEqual(m.links[3]!.logs, ['.mk8s/logs/node-1-cri-docker.log']);
});

test('only the first of several broken links is flagged; repeated steps get distinct keys', () => {
  const m = chainModel('DaemonSet', [ok('stored'), { step: 'node n1', status: 'broken', evidence: 'a' }, { step: 'node n2', status: 'broken', evidence: 'b' }]);
  assert.deepEqual(m.links.map((l) => l.firstBroken), [false, true, false]);
  assert.equal(m.links.length, 3, 'no expected tail for a DaemonSet');
  const twice = chainModel('Service', [ok('endpoints'), ok('endpoints')]);
  assert.deepEqual(twice.links.map((l) => l.key), ['endpoints', 'endpoints#1']);
});

test('logs come from the hint and from the owner', () => {
  assert.deepEqual(logsOf({ owner: 'kube-controller-manager (replicaset controller)', hint: 'mkctl describe rs web-1; .mk8s/logs/controller-manager.log' }), ['.mk8s/logs/controller-manager.log']);
  assert.deepEqual(logsOf({ owner: 'the application in the container (kubelet restarts it with back-off)', hint: 'mkctl logs web-1 -c web --previous' }), ['mkctl logs web-1 -c web --previous']);
  assert.deepEqual(logsOf({ owner: 'kubelet on node-2', hint: 'mkctl describe pod x' }), ['.mk8s/logs/node-2-kubelet.log']);
  assert.deepEqual(logsOf({ owner: 'the Service spec (yours)' }), []);
});

test('labels and kinds', () => {
  assert.equal(stepLabel('image'), 'Image (kubelet → runtime)');
  assert.equal(stepLabel('job pods'), 'Job: Pods (owner controller)');
  assert.equal(stepLabel('ordinal 2'), 'Ordinal 2');
  assert.equal(traceKindOf('deployments'), 'Deployment');
  assert.equal(traceKindOf('Pod'), 'Pod');
  assert.equal(traceKindOf('configmaps'), undefined);
  assert.equal(traceKindOf('hpa'), 'HorizontalPodAutoscaler');
  // every kind the trace follows has a route kind, and none of the shared library's kinds is forgotten
  for (const k of TRACE_KINDS) assert.equal(traceKindOf(k), k);
});
