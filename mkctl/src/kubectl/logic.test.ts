import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type * as apps from 'kubernetes-types/apps/v1.js';
import type * as core from 'kubernetes-types/core/v1.js';
import { patchSchemaFor, applyStrategicMergePatch, Deployments } from '@mk8s/api';
import { threeWayMergePatch, withLastApplied, LAST_APPLIED } from './three-way-patch.js';
import { deploymentRolloutStatus, ProgressLine } from './rollout-status.js';
import { planDrain } from './commands/nodes.js';
import { deleteOptionsBody, parseDurationMs } from './commands/delete.js';
import { parseManifests } from './manifests.js';
import { parseKeyValueArgs } from './commands/metadata.js';
import { describePod } from './describe/describers.js';

describe('apply: three-way strategic merge patch', () => {
  const schema = patchSchemaFor(Deployments);
  type Dep = { apiVersion: string; kind: string; metadata: { name: string; labels: Record<string, string>; annotations?: Record<string, string> }; spec: { replicas: number; template: { spec: { containers: { name: string; image: string; env: { name: string; value: string }[] }[] } } } };
  const dep = (replicas: number, env: { name: string; value: string }[], labels: Record<string, string> = { app: 'w' }): Dep => ({
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'w', labels },
    spec: { replicas, template: { spec: { containers: [{ name: 'c', image: 'i', env }] } } },
  });
  test('unchanged when nothing differs (server defaults are ignored)', () => {
    const applied = withLastApplied(dep(2, [{ name: 'A', value: '1' }]));
    const live = structuredClone(applied) as Dep & { spec: { strategy?: unknown } };
    live.spec.strategy = { type: 'RollingUpdate' };
    const orig = JSON.parse(applied.metadata.annotations![LAST_APPLIED]!);
    assert.deepEqual(threeWayMergePatch(orig, withLastApplied(dep(2, [{ name: 'A', value: '1' }])), live, schema), {});
  });
  test('drops fields and merge-list items removed from the file, keeps others', () => {
    const before = withLastApplied(dep(2, [{ name: 'A', value: '1' }, { name: 'B', value: '2' }], { app: 'w', old: 'x' }));
    const orig = JSON.parse(before.metadata.annotations![LAST_APPLIED]!);
    const after = withLastApplied(dep(1, [{ name: 'A', value: '1' }]));
    const patch = threeWayMergePatch(orig, after, before, schema);
    const result = applyStrategicMergePatch(before, patch, schema) as Dep;
    assert.equal(result.spec.replicas, 1);
    assert.deepEqual(result.spec.template.spec.containers[0]!.env, [{ name: 'A', value: '1' }]);
    assert.deepEqual(result.metadata.labels, { app: 'w' });
    assert.equal(result.metadata.annotations![LAST_APPLIED], after.metadata.annotations![LAST_APPLIED]);
  });
  test('the recorded configuration is sorted JSON with a newline and empty annotations, like kubectl', () => {
    assert.equal(withLastApplied({ kind: 'Service', apiVersion: 'v1', metadata: { name: 's' } as { annotations?: Record<string, string> } }).metadata!.annotations![LAST_APPLIED], '{"apiVersion":"v1","kind":"Service","metadata":{"annotations":{},"name":"s"}}\n');
  });
});

describe('rollout status (rollout_status.go)', () => {
  const d = (gen: number, obs: number, spec: number, st: apps.DeploymentStatus): apps.Deployment => ({ metadata: { name: 'web', generation: gen }, spec: { replicas: spec, selector: {}, template: {} }, status: { observedGeneration: obs, ...st } });
  const cases: [string, apps.Deployment, string, boolean][] = [
    ['spec not observed', d(2, 1, 3, {}), 'Waiting for deployment spec update to be observed...', false],
    ['new replicas updating', d(1, 1, 3, { updatedReplicas: 1, replicas: 3 }), 'Waiting for deployment "web" rollout to finish: 1 out of 3 new replicas have been updated...', false],
    ['old replicas terminating', d(1, 1, 3, { updatedReplicas: 3, replicas: 4 }), 'Waiting for deployment "web" rollout to finish: 1 old replicas are pending termination...', false],
    ['waiting for availability', d(1, 1, 3, { updatedReplicas: 3, replicas: 3, availableReplicas: 2 }), 'Waiting for deployment "web" rollout to finish: 2 of 3 updated replicas are available...', false],
    ['done', d(1, 1, 3, { updatedReplicas: 3, replicas: 3, availableReplicas: 3 }), 'deployment "web" successfully rolled out', true],
  ];
  for (const [name, dep, msg, done] of cases) test(name, () => assert.deepEqual(deploymentRolloutStatus(dep), { message: msg, done }));
  test('progress deadline exceeded is an error', () => {
    assert.equal(deploymentRolloutStatus(d(1, 1, 1, { conditions: [{ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded' }] })).error, 'deployment "web" exceeded its progress deadline');
  });
  test('progress: plain lines print each message once; a TTY rewrites one line', () => {
    const chunks: string[] = [];
    const plain = new ProgressLine({ write: (s: string) => { chunks.push(s); return true; } } as never);
    plain.update('a'); plain.update('a'); plain.update('b'); plain.done('ok');
    assert.deepEqual(chunks, ['a\n', 'b\n', 'ok\n']);
    const tty: string[] = [];
    const p = new ProgressLine({ isTTY: true, write: (s: string) => { tty.push(s); return true; } } as never);
    p.update('a'); p.done('ok');
    assert.match(tty[0]!, /^\r\x1b\[2K. a$/);
    assert.equal(tty.at(-1), 'ok\n');
  });
});

describe('drain filters', () => {
  const p = (name: string, o: Partial<core.Pod['metadata']> = {}, spec: Partial<core.PodSpec> = {}): core.Pod => ({ metadata: { name, namespace: 'd', ...o }, spec: { containers: [], ...spec }, status: { phase: 'Running' } });
  const rsOwned = { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'r', uid: 'u', controller: true }] };
  const dsOwned = { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'ds', uid: 'u2', controller: true }] };
  test('refuses DaemonSet, unmanaged and emptyDir pods without the flags', () => {
    const plan = planDrain([p('a', rsOwned), p('b', dsOwned), p('c'), p('e', rsOwned, { volumes: [{ name: 'v', emptyDir: {} }] })], { ignoreDaemonsets: false, deleteEmptydirData: false, force: false });
    assert.deepEqual(plan.evict.map((x) => x.metadata!.name), ['a']);
    assert.equal(plan.errors.length, 3);
    assert.match(plan.errors.join(), /use --ignore-daemonsets.*d\/b/);
  });
  test('with the flags evicts all but DaemonSet pods, with warnings', () => {
    const plan = planDrain([p('a', rsOwned), p('b', dsOwned), p('c'), p('e', rsOwned, { volumes: [{ name: 'v', emptyDir: {} }] })], { ignoreDaemonsets: true, deleteEmptydirData: true, force: true });
    assert.deepEqual(plan.evict.map((x) => x.metadata!.name), ['a', 'c', 'e']);
    assert.deepEqual(plan.errors, []);
    assert.match(plan.warnings[0]!, /ignoring DaemonSet-managed Pods: d\/b/);
  });
});

describe('argument parsing', () => {
  test('delete options', () => {
    assert.deepEqual(deleteOptionsBody({ cascade: 'foreground' }), { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Foreground' });
    assert.deepEqual(deleteOptionsBody({ cascade: 'orphan', gracePeriod: '0', force: true }), { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Orphan', gracePeriodSeconds: 0 });
    assert.equal(deleteOptionsBody({ gracePeriod: '0' })['gracePeriodSeconds'], 1);
    assert.throws(() => deleteOptionsBody({ cascade: 'bogus' }), /invalid cascade value/);
  });
  test('durations', () => {
    assert.equal(parseDurationMs('1m30s'), 90_000);
    assert.equal(parseDurationMs('0s'), 0);
    assert.throws(() => parseDurationMs('soon'), /invalid duration/);
  });
  test('label arguments', () => {
    assert.deepEqual(parseKeyValueArgs(['a=b', 'c-']), { set: { a: 'b' }, remove: ['c'] });
    assert.throws(() => parseKeyValueArgs(['=x']), /invalid label spec/);
  });
  test('manifests: multi-document YAML, Lists, and errors with line and column', () => {
    const ms = parseManifests('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: b}}\n', 'f.yaml');
    assert.deepEqual(ms.map((m) => m.object.metadata?.name), ['a', 'b']);
    assert.throws(() => parseManifests('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n data: y\n', 'bad.yaml'), { message: /^error: error parsing bad\.yaml: line 5, column 2: / });
    assert.throws(() => parseManifests('apiVersion: v1\nmetadata: {name: a}\n', 'k.yaml'), /kind not set/);
  });
});

describe('describe pod sections', () => {
  test('sections in kubectl order, aligned by the tabwriter', () => {
    const pod: core.Pod = {
      metadata: { name: 'p', namespace: 'd', labels: { app: 'x', b: 'y' }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'u', controller: true }] },
      spec: {
        priority: 0, serviceAccountName: 'default', nodeName: 'node-1', nodeSelector: { disk: 'ssd' },
        containers: [{ name: 'c', image: 'img', ports: [{ containerPort: 80, protocol: 'TCP' }], env: [{ name: 'A', value: '1' }], readinessProbe: { httpGet: { path: '/r', port: 80 } }, resources: { limits: { cpu: '1' } } }],
        tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }],
      },
      status: { phase: 'Running', hostIP: '10.240.0.11', podIP: '10.244.0.5', podIPs: [{ ip: '10.244.0.5' }], qosClass: 'Burstable', conditions: [{ type: 'Ready', status: 'True' }], containerStatuses: [{ name: 'c', image: 'img', imageID: 'docker://1', containerID: 'docker://2', ready: true, restartCount: 0, state: { running: { startedAt: '2026-11-30T09:00:00Z' } } }] },
    };
    const text = describePod(pod, [], Date.parse('2026-11-30T09:10:00Z'));
    const titles = text.split('\n').filter((l) => /^[A-Z][\w -]*:/.test(l)).map((l) => l.split(':')[0]);
    assert.deepEqual(titles, ['Name', 'Namespace', 'Priority', 'Service Account', 'Node', 'Labels', 'Annotations', 'Status', 'IP', 'IPs', 'Controlled By', 'Containers', 'Conditions', 'Volumes', 'QoS Class', 'Node-Selectors', 'Tolerations', 'Events']);
    assert.match(text, /^Name:             p$/m);
    assert.match(text, /^Labels:           app=x\n                  b=y$/m);
    assert.match(text, /^    Readiness:  http-get http:\/\/:80\/r delay=0s timeout=1s period=10s #success=1 #failure=3$/m);
    assert.match(text, /^Tolerations:\s+node\.kubernetes\.io\/not-ready:NoExecute op=Exists for 300s$/m);
    assert.match(text, /^Events:\s+<none>$/m);
  });
});
