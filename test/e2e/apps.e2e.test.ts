/**
 * Issue 16's apps/policy half with the real kubectl: a DaemonSet puts one pod on every node and
 * rolls out/undoes through ControllerRevisions; a StatefulSet creates web-0, web-1, web-2 in order,
 * scales down in reverse and rolls out behind a partition, and another is rolled back through
 * `kubectl rollout history|undo` (revisions renumbered as upstream); `kubectl drain` is held by a
 * PodDisruptionBudget until a replica is Ready on another node. One namespace, deleted afterwards.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { kubectl, kubectlOk, kubectlStream, uniqueName, waitFor } from './lib/cluster.js';

const ns = uniqueName('e2e-apps');
const k = (args: string[], input?: string) => kubectlOk(['-n', ns, ...args], input === undefined ? {} : { input, timeoutMs: 150_000 });
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const jsonOf = (...args: string[]) => JSON.parse(k([...args, '-o', 'json'])) as Record<string, any>;
const POD = `
      automountServiceAccountToken: false
      terminationGracePeriodSeconds: 0
      containers: [{ name: c, image: busybox, imagePullPolicy: IfNotPresent, command: [sleep, '3600'] }]`;

describe('apps/v1 DaemonSet, StatefulSet and policy/v1 PodDisruptionBudget', () => {
  before(() => { kubectlOk(['create', 'namespace', ns]); });
  after(() => { kubectl(['delete', 'namespace', ns, '--wait=false']); });

  test('a DaemonSet runs one pod on each node; rollout status, history and undo', async () => {
    const nodes = (JSON.parse(kubectlOk(['get', 'nodes', '-o', 'json'])).items as { metadata: { name: string } }[]).map((n) => n.metadata.name).sort();
    k(['apply', '-f', '-'], `
apiVersion: apps/v1
kind: DaemonSet
metadata: { name: agent }
spec:
  selector: { matchLabels: { app: agent } }
  template:
    metadata: { labels: { app: agent } }
    spec:${POD}
`);
    assert.match(k(['rollout', 'status', 'ds/agent', '--timeout=120s']), /daemon set "agent" successfully rolled out/);
    const pods = jsonOf('get', 'pods', '-l', 'app=agent').items as { spec: { nodeName: string } }[];
    assert.deepEqual(pods.map((p) => p.spec.nodeName).sort(), nodes, 'one pod on each node');
    assert.match(k(['get', 'ds', 'agent']), new RegExp(`^agent\\s+${nodes.length}\\s+${nodes.length}\\s+${nodes.length}\\s+${nodes.length}\\s+${nodes.length}\\s+<none>\\s`, 'm'));
    k(['set', 'env', 'ds/agent', 'WAVE=2']);
    assert.match(k(['rollout', 'status', 'ds/agent', '--timeout=120s']), /successfully rolled out/);
    const history = k(['rollout', 'history', 'ds/agent']);
    assert.match(history, /^1\s/m);
    assert.match(history, /^2\s/m);
    assert.match(k(['rollout', 'undo', 'ds/agent']), /daemonset.apps\/agent rolled back/);
    assert.match(k(['rollout', 'status', 'ds/agent', '--timeout=120s']), /successfully rolled out/);
    const ds = jsonOf('get', 'ds', 'agent');
    assert.equal(ds.spec.template.spec.containers[0].env, undefined, 'the template of revision 1 is back');
    assert.match(k(['rollout', 'history', 'ds/agent']), /^3\s/m);
    k(['delete', 'ds', 'agent']);
  });

  test('a StatefulSet creates web-0, web-1, web-2 in order, scales down in reverse and rolls out behind a partition', async () => {
    k(['apply', '-f', '-'], `
apiVersion: v1
kind: Service
metadata: { name: web }
spec: { clusterIP: None, selector: { app: web }, ports: [{ port: 80 }] }
---
apiVersion: apps/v1
kind: StatefulSet
metadata: { name: web }
spec:
  serviceName: web
  replicas: 3
  selector: { matchLabels: { app: web } }
  template:
    metadata: { labels: { app: web } }
    spec:${POD}
`);
    assert.match(k(['rollout', 'status', 'sts/web', '--timeout=150s']), /roll out complete|rolling update complete/);
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const byName = new Map((jsonOf('get', 'pods', '-l', 'app=web').items as any[]).map((p) => [p.metadata.name, p]));
    assert.deepEqual([...byName.keys()].sort(), ['web-0', 'web-1', 'web-2']);
    for (const [prev, next] of [['web-0', 'web-1'], ['web-1', 'web-2']] as const) {
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      const readyAt = Date.parse(byName.get(prev).status.conditions.find((c: any) => c.type === 'Ready').lastTransitionTime);
      assert.ok(Date.parse(byName.get(next).metadata.creationTimestamp) >= readyAt, `${next} created after ${prev} was Ready`);
    }
    const web0 = byName.get('web-0');
    assert.equal(web0.spec.hostname, 'web-0');
    assert.equal(web0.spec.subdomain, 'web');
    assert.equal(web0.metadata.labels['statefulset.kubernetes.io/pod-name'], 'web-0');
    assert.equal(web0.metadata.labels['apps.kubernetes.io/pod-index'], '0');
    assert.match(k(['get', 'sts', 'web']), /^web\s+3\/3\s/m);

    assert.match(k(['scale', 'sts', 'web', '--replicas=1']), /statefulset.apps\/web scaled/);
    const seen: string[][] = [];
    await waitFor(() => {
      const names = (jsonOf('get', 'pods', '-l', 'app=web').items as { metadata: { name: string } }[]).map((p) => p.metadata.name).sort();
      seen.push(names);
      return names.length === 1;
    }, { timeoutMs: 90_000, intervalMs: 100, what: 'scale-down to web-0' });
    assert.deepEqual(seen[seen.length - 1], ['web-0']);
    for (const s of seen) assert.ok(!(s.includes('web-2') && !s.includes('web-1')), `web-1 went before web-2: ${JSON.stringify(seen)}`);

    k(['scale', 'sts', 'web', '--replicas=2']);
    assert.match(k(['rollout', 'status', 'sts/web', '--timeout=120s']), /roll out complete/);
    k(['patch', 'sts', 'web', '-p', '{"spec":{"updateStrategy":{"rollingUpdate":{"partition":1}}}}']);
    k(['set', 'env', 'sts/web', 'WAVE=2']);
    assert.match(k(['rollout', 'status', 'sts/web', '--timeout=120s']), /partitioned roll out complete: 1 new pods have been updated/);
    const sts = jsonOf('get', 'sts', 'web');
    const rev = (name: string) => jsonOf('get', 'pod', name).metadata.labels['controller-revision-hash'];
    assert.equal(rev('web-1'), sts.status.updateRevision);
    assert.equal(rev('web-0'), sts.status.currentRevision);
    assert.notEqual(sts.status.currentRevision, sts.status.updateRevision);
    k(['delete', 'sts', 'web']);
  });

  test('a StatefulSet: set image, rollout history, undo and undo --to-revision renumber revisions as upstream', async () => {
    k(['apply', '-f', '-'], `
apiVersion: apps/v1
kind: StatefulSet
metadata: { name: db }
spec:
  serviceName: db
  replicas: 2
  selector: { matchLabels: { app: db } }
  template:
    metadata: { labels: { app: db } }
    spec:${POD}
`);
    const done = /roll out complete|rolling update complete/;
    const revisions = () => [...k(['rollout', 'history', 'sts/db']).matchAll(/^(\d+)\s/gm)].map((m) => Number(m[1]));
    // Every pod of the set runs `image`, at the set's updateRevision (the pods were re-created).
    const podsRun = (image: string) => {
      const sts = jsonOf('get', 'sts', 'db');
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      const pods = jsonOf('get', 'pods', '-l', 'app=db').items as any[];
      assert.deepEqual(pods.map((p) => p.metadata.name).sort(), ['db-0', 'db-1']);
      for (const p of pods) {
        assert.equal(p.spec.containers[0].image, image, `${p.metadata.name} runs ${image}`);
        assert.equal(p.metadata.labels['controller-revision-hash'], sts.status.updateRevision, `${p.metadata.name} is at the update revision`);
      }
      assert.equal(sts.status.currentRevision, sts.status.updateRevision);
    };
    assert.match(k(['rollout', 'status', 'sts/db', '--timeout=150s']), done);
    assert.deepEqual(revisions(), [1]);

    k(['set', 'image', 'sts/db', 'c=busybox:1.36']);
    assert.match(k(['rollout', 'status', 'sts/db', '--timeout=150s']), done);
    podsRun('busybox:1.36');
    assert.deepEqual(revisions(), [1, 2]);
    assert.match(k(['rollout', 'history', 'sts/db', '--revision=2']), /Image:\s+busybox:1\.36/);
    const atRevision2 = new Set((jsonOf('get', 'pods', '-l', 'app=db').items as { metadata: { uid: string } }[]).map((p) => p.metadata.uid));

    assert.match(k(['rollout', 'undo', 'sts/db']), /statefulset.apps\/db rolled back/);
    assert.match(k(['rollout', 'status', 'sts/db', '--timeout=150s']), done);
    podsRun('busybox');
    for (const p of jsonOf('get', 'pods', '-l', 'app=db').items as { metadata: { name: string; uid: string } }[]) {
      assert.ok(!atRevision2.has(p.metadata.uid), `${p.metadata.name} was re-created`);
    }
    assert.deepEqual(revisions(), [2, 3], 'revision 1 is renumbered 3 (upstream)');

    assert.match(k(['rollout', 'undo', 'sts/db', '--to-revision=2']), /statefulset.apps\/db rolled back/);
    assert.match(k(['rollout', 'status', 'sts/db', '--timeout=150s']), done);
    podsRun('busybox:1.36');
    assert.deepEqual(revisions(), [3, 4]);
    const missing = kubectl(['-n', ns, 'rollout', 'undo', 'sts/db', '--to-revision=9']);
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /unable to find specified revision 9/);
    k(['delete', 'sts', 'db']);
  });

  test('drain is held by a PodDisruptionBudget until a replica is Ready on another node', async () => {
    k(['apply', '-f', '-'], `
apiVersion: apps/v1
kind: Deployment
metadata: { name: guard }
spec:
  replicas: 1
  selector: { matchLabels: { app: guard } }
  template:
    metadata: { labels: { app: guard } }
    spec:${POD}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: { name: guard }
spec:
  minAvailable: 1
  selector: { matchLabels: { app: guard } }
`);
    await waitFor(() => jsonOf('get', 'deploy', 'guard').status?.readyReplicas === 1, { timeoutMs: 60_000, what: 'guard ready' });
    await waitFor(() => {
      const p = jsonOf('get', 'pdb', 'guard');
      return p.status?.observedGeneration === p.metadata.generation && p.status.currentHealthy === 1 && p.status.disruptionsAllowed === 0;
    }, { timeoutMs: 30_000, what: 'pdb status observed' });
    assert.match(k(['get', 'pdb', 'guard']), /^guard\s+1\s+N\/A\s+0\s/m);
    const first = jsonOf('get', 'pods', '-l', 'app=guard').items[0];
    const node: string = first.spec.nodeName;
    const drain = kubectlStream(['drain', node, '--pod-selector', 'app=guard', '--ignore-daemonsets', '--timeout=150s']);
    try {
      await waitFor(() => /Cannot evict pod as it would violate the pod's disruption budget/.test(drain.output()), { timeoutMs: 60_000, what: 'drain refused by the PDB' });
      assert.equal(jsonOf('get', 'pod', first.metadata.name).metadata.deletionTimestamp, undefined, 'the pod still runs');
      // A second replica lands on another node (this one is cordoned); once Ready, the budget allows the eviction.
      k(['scale', 'deploy', 'guard', '--replicas=2']);
      await waitFor(() => new RegExp(`node/${node} drained`).test(drain.output()), { timeoutMs: 150_000, what: `drain of ${node} to finish: ${drain.output()}` });
      assert.match(drain.output(), new RegExp(`pod/${first.metadata.name} evicted`));
      const pods = jsonOf('get', 'pods', '-l', 'app=guard').items as { metadata: { name: string }; spec: { nodeName?: string } }[];
      assert.ok(pods.every((p) => p.spec.nodeName !== node), 'no guard pod left on the drained node');
    } finally {
      await drain.stop();
      kubectl(['uncordon', node]);
    }
  });
});
