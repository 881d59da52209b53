/**
 * Issue 17's storage acceptance on the real cluster with the real kubectl: the default
 * StorageClass `standard` (local-path, WaitForFirstConsumer), data that outlives its pod, the PV
 * landing on the node the scheduler chose, a claim of an absent class, both reclaim policies, and
 * a StatefulSet's per-ordinal claims (kept across a pod's replacement, collected on scale-down
 * with whenScaled: Delete, kept when the set goes with whenDeleted: Retain).
 * One namespace, deleted afterwards; a Retain PV and its directory are removed by the test.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { KUBECONFIG, kubectl, kubectlOk, ROOT, uniqueName, waitFor } from './lib/cluster.js';

const ns = uniqueName('e2e-storage');
const k = (args: string[], input?: string) => kubectlOk(['-n', ns, ...args], input === undefined ? {} : { input });
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const jsonOf = (...args: string[]) => JSON.parse(k([...args, '-o', 'json'])) as Record<string, any>;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const pvJson = (name: string) => JSON.parse(kubectlOk(['get', 'pv', name, '-o', 'json'])) as Record<string, any>;

const claim = (name: string, cls?: string) => `
apiVersion: v1
kind: PersistentVolumeClaim
metadata: { name: ${name} }
spec:
  accessModes: [ReadWriteOnce]
  resources: { requests: { storage: 64Mi } }
${cls !== undefined ? `  storageClassName: ${cls}\n` : ''}`;

const pod = (name: string, claimName: string, script: string, restartPolicy = 'Always') => `
apiVersion: v1
kind: Pod
metadata: { name: ${name} }
spec:
  automountServiceAccountToken: false
  terminationGracePeriodSeconds: 0
  restartPolicy: ${restartPolicy}
  containers: [{ name: c, image: busybox, imagePullPolicy: IfNotPresent, command: [sh, -c, '${script}'], volumeMounts: [{ name: data, mountPath: /data }] }]
  volumes: [{ name: data, persistentVolumeClaim: { claimName: ${claimName} } }]
`;

const phase = (kind: string, name: string) => jsonOf('get', kind, name).status?.phase as string | undefined;
const events = (name: string) => k(['get', 'events', '--field-selector', `involvedObject.name=${name}`, '-o', 'custom-columns=REASON:.reason,MESSAGE:.message', '--no-headers']);

describe('storage: claims, the local-path provisioner and reclaim', () => {
  before(() => { kubectlOk(['create', 'namespace', ns]); });
  after(() => { kubectl(['delete', 'namespace', ns, '--wait=false']); });

  test('the default class is standard (local-path, WaitForFirstConsumer)', () => {
    assert.match(kubectlOk(['get', 'storageclass']), /^NAME\s+PROVISIONER\s+RECLAIMPOLICY\s+VOLUMEBINDINGMODE\s+ALLOWVOLUMEEXPANSION\s+AGE\nstandard \(default\)\s+mk8s\.io\/local-path\s+Delete\s+WaitForFirstConsumer\s+true\s/m);
  });

  test('WaitForFirstConsumer: the claim waits for a pod, its PV lands on the scheduler\'s node; the data survives pod replacement; Delete removes the directory', async () => {
    k(['apply', '-f', '-'], claim('data'));
    assert.equal(jsonOf('get', 'pvc', 'data').spec.storageClassName, 'standard', 'DefaultStorageClass filled the class');
    await waitFor(() => /WaitForFirstConsumer\s+waiting for first consumer to be created before binding/.test(events('data')), { timeoutMs: 30_000, what: 'WaitForFirstConsumer event' });
    assert.equal(phase('pvc', 'data'), 'Pending');

    k(['apply', '-f', '-'], pod('writer', 'data', 'echo kept-$HOSTNAME > /data/f && sleep 3600'));
    await waitFor(() => phase('pod', 'writer') === 'Running', { timeoutMs: 90_000, what: 'writer Running' });
    const node = jsonOf('get', 'pod', 'writer').spec.nodeName as string;
    const pvc = jsonOf('get', 'pvc', 'data');
    assert.equal(pvc.status.phase, 'Bound');
    assert.equal(pvc.metadata.annotations['volume.kubernetes.io/selected-node'], node);
    const pv = pvJson(pvc.spec.volumeName);
    assert.deepEqual(pv.spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values, [node]);
    assert.equal(pv.spec.persistentVolumeReclaimPolicy, 'Delete');
    const dir = pv.spec.hostPath.path as string;
    assert.ok(dir.includes(`/nodes/${node}/local-path/`), `${dir} is under ${node}'s data dir`);
    await waitFor(() => existsSync(`${dir}/f`), { timeoutMs: 10_000, what: 'the file on the node' });
    assert.match(k(['get', 'pvc', 'data']), new RegExp(`^data\\s+Bound\\s+${pv.metadata.name}\\s+64Mi\\s+RWO\\s+standard\\s+<unset>\\s`, 'm'));
    assert.match(kubectlOk(['get', 'pv', pv.metadata.name]), new RegExp(`^${pv.metadata.name}\\s+64Mi\\s+RWO\\s+Delete\\s+Bound\\s+${ns}/data\\s+standard\\s`, 'm'));

    k(['delete', 'pod', 'writer', '--wait=true']);
    k(['apply', '-f', '-'], pod('reader', 'data', 'cat /data/f', 'Never'));
    await waitFor(() => phase('pod', 'reader') === 'Succeeded', { timeoutMs: 90_000, what: 'reader Succeeded' });
    assert.equal(jsonOf('get', 'pod', 'reader').spec.nodeName, node, 'the claim pins the new pod to the same node');
    assert.match(k(['logs', 'reader']), /^kept-writer$/m);

    k(['delete', 'pod', 'reader', '--wait=true']);
    k(['delete', 'pvc', 'data', '--wait=true']);
    await waitFor(() => kubectl(['get', 'pv', pv.metadata.name]).code !== 0, { timeoutMs: 90_000, what: 'the PV deleted by the provisioner' });
    assert.equal(existsSync(dir), false, 'the helper pod removed the directory');
  });

  test('a claim in use is not removed until its pod is gone (pvc-protection)', async () => {
    k(['apply', '-f', '-'], claim('busy'));
    k(['apply', '-f', '-'], pod('user', 'busy', 'sleep 3600'));
    await waitFor(() => phase('pod', 'user') === 'Running', { timeoutMs: 90_000, what: 'user Running' });
    k(['delete', 'pvc', 'busy', '--wait=false']);
    await waitFor(() => /Terminating/.test(k(['get', 'pvc', 'busy'])), { timeoutMs: 10_000, what: 'claim Terminating' });
    assert.deepEqual(jsonOf('get', 'pvc', 'busy').metadata.finalizers, ['kubernetes.io/pvc-protection']);
    k(['delete', 'pod', 'user', '--wait=true']);
    await waitFor(() => kubectl(['-n', ns, 'get', 'pvc', 'busy']).code !== 0, { timeoutMs: 60_000, what: 'claim gone once the pod is' });
  });

  test('Retain: deleting the claim leaves the PV Released and its directory', async () => {
    kubectlOk(['apply', '-f', '-'], { input: `
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: { name: ${ns}-retain }
provisioner: mk8s.io/local-path
reclaimPolicy: Retain
volumeBindingMode: WaitForFirstConsumer
` });
    k(['apply', '-f', '-'], claim('kept', `${ns}-retain`));
    k(['apply', '-f', '-'], pod('w', 'kept', 'echo x > /data/x', 'Never'));
    await waitFor(() => phase('pod', 'w') === 'Succeeded', { timeoutMs: 90_000, what: 'pod w Succeeded' });
    const pvName = jsonOf('get', 'pvc', 'kept').spec.volumeName as string;
    const dir = pvJson(pvName).spec.hostPath.path as string;
    k(['delete', 'pod', 'w', '--wait=true']);
    k(['delete', 'pvc', 'kept', '--wait=true']);
    await waitFor(() => pvJson(pvName).status.phase === 'Released', { timeoutMs: 30_000, what: 'PV Released' });
    assert.ok(existsSync(`${dir}/x`), 'the data stays');
    assert.match(kubectlOk(['get', 'pv', pvName]), new RegExp(`^${pvName}\\s+64Mi\\s+RWO\\s+Retain\\s+Released\\s+${ns}/kept\\s`, 'm'));
    kubectlOk(['delete', 'pv', pvName, '--wait=true']);
    kubectlOk(['delete', 'storageclass', `${ns}-retain`]);
    rmSync(dir, { recursive: true, force: true });
  });

  test('a claim of an absent class stays Pending with an event; its pod is unschedulable', async () => {
    k(['apply', '-f', '-'], claim('gold', 'gold'));
    await waitFor(() => /ProvisioningFailed\s+storageclass\.storage\.k8s\.io "gold" not found/.test(events('gold')), { timeoutMs: 30_000, what: 'ProvisioningFailed event' });
    assert.equal(phase('pvc', 'gold'), 'Pending');
    k(['apply', '-f', '-'], pod('stuck', 'gold', 'sleep 1'));
    await waitFor(() => /FailedScheduling\s+0\/\d+ nodes are available: pod has unbound immediate PersistentVolumeClaims/.test(events('stuck')), { timeoutMs: 30_000, what: 'FailedScheduling' });
    assert.equal(phase('pod', 'stuck'), 'Pending');
  });

  test('a StatefulSet\'s per-ordinal claims: data-db-<n> bound per pod, data kept when a pod is replaced (same node), collected on scale-down (whenScaled Delete), kept when the set goes (whenDeleted Retain)', async () => {
    k(['apply', '-f', '-'], `
apiVersion: apps/v1
kind: StatefulSet
metadata: { name: db }
spec:
  replicas: 2
  serviceName: db
  podManagementPolicy: Parallel
  persistentVolumeClaimRetentionPolicy: { whenDeleted: Retain, whenScaled: Delete }
  selector: { matchLabels: { app: db } }
  template:
    metadata: { labels: { app: db } }
    spec:
      automountServiceAccountToken: false
      terminationGracePeriodSeconds: 0
      containers: [{ name: c, image: busybox, imagePullPolicy: IfNotPresent, command: [sh, -c, 'sleep 3600'], volumeMounts: [{ name: data, mountPath: /data }] }]
  volumeClaimTemplates:
  - metadata: { name: data }
    spec: { accessModes: [ReadWriteOnce], resources: { requests: { storage: 32Mi } } }
`);
    const running = (name: string) => { const r = kubectl(['-n', ns, 'get', 'pod', name, '-o', 'json']); return r.code === 0 && JSON.parse(r.stdout).status?.phase === 'Running' ? JSON.parse(r.stdout) : undefined; };
    await waitFor(() => running('db-0') && running('db-1'), { timeoutMs: 120_000, what: 'db-0 and db-1 Running' });
    for (const n of [0, 1]) {
      const c = jsonOf('get', 'pvc', `data-db-${n}`);
      assert.equal(c.status.phase, 'Bound', `data-db-${n} Bound`);
      assert.equal(c.metadata.labels.app, 'db', 'the selector labels on the claim');
      assert.equal(c.metadata.ownerReferences, undefined, 'in range with whenDeleted Retain: no owner');
      assert.deepEqual(jsonOf('get', 'pod', `db-${n}`).spec.volumes.find((v: { name: string }) => v.name === 'data').persistentVolumeClaim, { claimName: `data-db-${n}` });
    }
    const token = `t-${Date.now()}`;
    k(['exec', 'db-0', '--', 'sh', '-c', `echo ${token} > /data/token`]);
    const first = jsonOf('get', 'pod', 'db-0');
    k(['delete', 'pod', 'db-0', '--wait=true']);
    await waitFor(() => { const p = running('db-0'); return p && p.metadata.uid !== first.metadata.uid; }, { timeoutMs: 120_000, what: 'db-0 replaced and Running' });
    assert.equal(jsonOf('get', 'pod', 'db-0').spec.nodeName, first.spec.nodeName, 'the claim\'s PV pins db-0 to its node');
    assert.equal(k(['exec', 'db-0', '--', 'cat', '/data/token']).trim(), token, 'the same ordinal reads its claim\'s data');
    // mkctl trace pvc/x: claim → bound PV → node → mounted, every link ok.
    const trace = spawnSync(process.execPath, [join(ROOT, 'mkctl', 'dist', 'main.js'), '-n', ns, 'trace', 'pvc/data-db-0'], { encoding: 'utf8', env: { ...process.env, KUBECONFIG } });
    assert.equal(trace.status, 0, trace.stdout + trace.stderr);
    assert.match(trace.stdout, new RegExp(`mounted[^\\n]*db-0 on ${first.spec.nodeName} Running`), trace.stdout);

    const pv1 = jsonOf('get', 'pvc', 'data-db-1').spec.volumeName as string;
    k(['scale', 'statefulset', 'db', '--replicas=1']);
    await waitFor(() => kubectl(['-n', ns, 'get', 'pvc', 'data-db-1']).code !== 0, { timeoutMs: 90_000, what: 'data-db-1 collected after db-1 went' });
    await waitFor(() => kubectl(['get', 'pv', pv1]).code !== 0, { timeoutMs: 90_000, what: 'its PV deleted (reclaim Delete)' });

    k(['delete', 'statefulset', 'db', '--wait=true']);
    await waitFor(() => kubectl(['-n', ns, 'get', 'pod', 'db-0']).code !== 0, { timeoutMs: 60_000, what: 'db-0 gone with the set' });
    assert.equal(phase('pvc', 'data-db-0'), 'Bound', 'whenDeleted Retain keeps the claim');
  });
});
