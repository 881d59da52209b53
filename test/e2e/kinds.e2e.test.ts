/**
 * Issue 14's "kinds kubectl's everyday commands expect", with the real kubectl: ReplicationControllers
 * (`get all`, `scale rc`), PodTemplates, ResourceQuotas (`create quota`, `describe quota`, the 403 past
 * it), LimitRanges (defaults filled in), SubjectAccessReview/LocalSubjectAccessReview for callers and
 * `kubectl auth can-i`. One namespace, deleted afterwards.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { kubectl, kubectlOk, uniqueName, waitFor } from './lib/cluster.js';

const ns = uniqueName('e2e-kinds');
const k = (args: string[], input?: string) => kubectlOk(['-n', ns, ...args], input === undefined ? {} : { input });
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const jsonOf = (...args: string[]) => JSON.parse(k([...args, '-o', 'json'])) as Record<string, any>;

const rcManifest = `
apiVersion: v1
kind: ReplicationController
metadata: { name: web }
spec:
  replicas: 1
  template:
    metadata: { labels: { app: web-rc } }
    spec:
      automountServiceAccountToken: false
      terminationGracePeriodSeconds: 0
      containers: [{ name: web, image: busybox, imagePullPolicy: IfNotPresent, command: [sleep, '3600'] }]
`;

describe('kinds kubectl expects', () => {
  before(() => { kubectlOk(['create', 'namespace', ns]); });
  after(() => { kubectl(['delete', 'namespace', ns, '--wait=false']); });

  test('a ReplicationController runs its pods, shows in get all and scales with kubectl scale rc', async () => {
    assert.match(k(['apply', '-f', '-'], rcManifest), /replicationcontroller\/web created/);
    const rc = jsonOf('get', 'rc', 'web');
    assert.deepEqual(rc.spec.selector, { app: 'web-rc' });
    await waitFor(() => jsonOf('get', 'rc', 'web').status?.readyReplicas === 1, { timeoutMs: 60_000, what: 'rc web ready' });
    const all = k(['get', 'all']);
    assert.match(all, /^replicationcontroller\/web\s+1\s+1\s+1\s/m);
    assert.match(all, /^pod\/web-\S+\s+1\/1\s+Running/m);
    assert.match(k(['scale', 'rc', 'web', '--replicas=2']), /replicationcontroller\/web scaled/);
    await waitFor(() => jsonOf('get', 'rc', 'web').status?.replicas === 2, { timeoutMs: 30_000, what: 'rc web at 2 replicas' });
    const pods = jsonOf('get', 'pods', '-l', 'app=web-rc');
    assert.equal(pods.items.length, 2);
    for (const p of pods.items) assert.equal(p.metadata.ownerReferences[0].kind, 'ReplicationController');
    assert.match(k(['describe', 'rc', 'web']), /Replicas:\s+2 current \/ 2 desired/);
    assert.match(kubectlOk(['explain', 'replicationcontroller.spec.selector']), /FIELD: selector/);
    k(['delete', 'rc', 'web']);
    await waitFor(() => jsonOf('get', 'pods', '-l', 'app=web-rc').items.length === 0, { timeoutMs: 60_000, what: 'rc pods garbage-collected' });
  });

  test('PodTemplates are served with their columns', () => {
    k(['apply', '-f', '-'], `
apiVersion: v1
kind: PodTemplate
metadata: { name: tpl }
template:
  metadata: { labels: { a: b } }
  spec: { containers: [{ name: c, image: busybox }] }
`);
    assert.match(k(['get', 'podtemplates']), /^NAME\s+CONTAINERS\s+IMAGES\s+POD LABELS\ntpl\s+c\s+busybox\s+a=b/m);
  });

  test('kubectl create quota: the controller fills status, describe shows it, admission refuses past it', async () => {
    assert.match(k(['create', 'quota', 'q', '--hard=count/configmaps=3,pods=10']), /resourcequota\/q created/);
    const used = () => jsonOf('get', 'quota', 'q').status?.used as Record<string, string> | undefined;
    // kube-root-ca.crt is already there.
    await waitFor(() => used()?.['count/configmaps'] === '1', { timeoutMs: 30_000, what: 'quota status.used computed' });
    k(['create', 'configmap', 'a']);
    k(['create', 'configmap', 'b']);
    const over = kubectl(['-n', ns, 'create', 'configmap', 'c']);
    assert.notEqual(over.code, 0);
    assert.match(over.stderr, /configmaps "c" is forbidden: exceeded quota: q, requested: count\/configmaps=1, used: count\/configmaps=3, limited: count\/configmaps=3/);
    assert.match(k(['describe', 'quota', 'q']), /Resource\s+Used\s+Hard\n-+\s+-+\s+-+\ncount\/configmaps\s+3\s+3\npods\s+\d+\s+10/);
    assert.match(k(['get', 'quota']), /^NAME\s+AGE\s+REQUEST\s+LIMIT\nq\s+\S+\s+count\/configmaps: 3\/3, pods: \d+\/10\s*$/m);
    // Deleting releases the usage (the controller recounts).
    k(['delete', 'configmap', 'a']);
    await waitFor(() => used()?.['count/configmaps'] === '2', { timeoutMs: 30_000, what: 'quota usage released' });
    k(['delete', 'quota', 'q']);
  });

  test('a LimitRange fills container defaults and refuses more than its max', () => {
    k(['apply', '-f', '-'], `
apiVersion: v1
kind: LimitRange
metadata: { name: lr }
spec:
  limits:
  - type: Container
    max: { cpu: 500m }
    defaultRequest: { cpu: 100m, memory: 32Mi }
    default: { memory: 64Mi }
`);
    const lr = jsonOf('get', 'limits', 'lr');
    assert.deepEqual(lr.spec.limits[0].default, { cpu: '500m', memory: '64Mi' });
    k(['run', 'lr-pod', '--image=busybox', '--restart=Never', '--command', '--', 'true']);
    const p = jsonOf('get', 'pod', 'lr-pod');
    assert.deepEqual(p.spec.containers[0].resources, { limits: { cpu: '500m', memory: '64Mi' }, requests: { cpu: '100m', memory: '32Mi' } });
    assert.match(p.metadata.annotations['kubernetes.io/limit-ranger'], /^LimitRanger plugin set: cpu, memory request for container lr-pod; cpu, memory limit for container lr-pod$/);
    const big = kubectl(['-n', ns, 'apply', '-f', '-'], { input: `
apiVersion: v1
kind: Pod
metadata: { name: big }
spec: { restartPolicy: Never, containers: [{ name: c, image: busybox, command: ['true'], resources: { limits: { cpu: '1' } } }] }
` });
    assert.notEqual(big.code, 0);
    assert.match(big.stderr, /pods "big" is forbidden: maximum cpu usage per Container is 500m, but limit is 1/);
    k(['delete', 'limits', 'lr']);
    k(['delete', 'pod', 'lr-pod', '--wait=false']);
  });

  test('SubjectAccessReview and LocalSubjectAccessReview are served for callers; kubectl auth can-i agrees', () => {
    const sar = (user: string, verb: string) => kubectlOk(['create', '-o', 'jsonpath={.status.allowed}', '-f', '-'], { input: JSON.stringify({
      apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview',
      spec: { user, resourceAttributes: { namespace: ns, verb, resource: 'pods' } },
    }) });
    assert.equal(sar('system:kube-scheduler', 'list'), 'true');
    assert.equal(sar('nobody', 'list'), 'false');
    const lsar = k(['create', '-o', 'json', '-f', '-'], JSON.stringify({
      apiVersion: 'authorization.k8s.io/v1', kind: 'LocalSubjectAccessReview', metadata: { namespace: ns },
      spec: { user: 'nobody', resourceAttributes: { namespace: ns, verb: 'get', resource: 'configmaps' } },
    }));
    const o = JSON.parse(lsar) as { metadata: { namespace: string }; status: { allowed: boolean } };
    assert.equal(o.metadata.namespace, ns);
    assert.equal(o.status.allowed, false);
    assert.equal(kubectl(['auth', 'can-i', 'create', 'subjectaccessreviews.authorization.k8s.io']).stdout.trim(), 'yes');
    const sa = kubectl(['-n', ns, 'auth', 'can-i', 'list', 'secrets', `--as=system:serviceaccount:${ns}:default`]);
    assert.equal(sa.stdout.trim(), 'no');
    assert.match(kubectlOk(['api-resources', '--api-group=authorization.k8s.io', '--no-headers']), /localsubjectaccessreviews\s+authorization.k8s.io\/v1\s+true\s+LocalSubjectAccessReview/);
  });
});
