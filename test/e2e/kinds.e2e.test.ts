/**
 * Issue 14's "kinds kubectl's everyday commands expect", with the real kubectl: ReplicationControllers
 * (`get all`, `scale rc`) and PodTemplates. One namespace, deleted afterwards.
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
});
