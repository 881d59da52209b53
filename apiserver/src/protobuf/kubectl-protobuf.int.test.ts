/**
 * The real kubectl's protobuf-only verbs (its typed clientset always sends
 * application/vnd.kubernetes.protobuf) against the apiserver on real etcd: each must succeed and
 * the object must read back as if it had been sent as JSON. Answers stay JSON.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensurePki } from '@mk8s/component-base/pki';
import { kubeconfig, startTestApiServer, type TestApiServer, kubectlRunner } from '../testing/index.js';

describe('kubectl protobuf verbs', () => {
  let srv: TestApiServer;
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mk8s-kubectl-pb-'));
    // HTTPS + an admin client certificate: kubectl sends credentials only over TLS, and the
    // TokenRequest API needs a signing key (which turns authentication on). AlwaysAllow authorizes.
    const pki = await ensurePki(join(dir, 'pki'), { nodes: [] });
    srv = await startTestApiServer({
      etcdMembers: 1,
      tls: { certFile: pki.apiserver.cert, keyFile: pki.apiserver.key, clientCAFile: pki.ca.cert },
      security: { clientCAFile: pki.ca.cert, serviceAccountSigningKeyFile: pki.serviceAccount.key },
    });
    await writeFile(join(dir, 'kubeconfig'), kubeconfig(srv.url).replace('user: {}',
      `user: {client-certificate: ${pki.admin.cert}, client-key: ${pki.admin.key}}`).replace(`server: ${srv.url}`,
      `server: ${srv.url}\n    certificate-authority: ${pki.ca.cert}`));
  });
  after(async () => {
    await srv?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const { run, kubectl, ok } = kubectlRunner({ kubeconfig: () => join(dir, 'kubeconfig'), cacheDir: () => join(dir, 'cache') });
  const json = async (...args: string[]) => JSON.parse(await ok('get', ...args, '-o', 'json')) as Record<string, any>;

  test('create namespace', async () => {
    assert.match(await ok('create', 'namespace', 'pb'), /namespace\/pb created/);
    const ns = await json('namespace', 'pb');
    assert.equal(ns['status']['phase'], 'Active');
    assert.match(ns['metadata']['creationTimestamp'], /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  test('create configmap --from-literal', async () => {
    assert.match(await ok('create', 'configmap', 'cm', '--from-literal=a=1', '--from-literal=b=two words'), /configmap\/cm created/);
    assert.deepEqual((await json('configmap', 'cm'))['data'], { a: '1', b: 'two words' });
  });

  test('create secret generic keeps binary data exact', async () => {
    const bin = join(dir, 'bin.dat');
    await writeFile(bin, Buffer.from([0x61, 0x00, 0xff, 0x62]));
    assert.match(await ok('create', 'secret', 'generic', 's', '--from-literal=user=admin', `--from-file=bin=${bin}`), /secret\/s created/);
    const s = await json('secret', 's');
    assert.equal(s['type'], 'Opaque');
    assert.deepEqual(s['data'], { user: Buffer.from('admin').toString('base64'), bin: 'YQD/Yg==' });
  });

  test('create deployment --image --replicas', async () => {
    assert.match(await ok('create', 'deployment', 'web', '--image=nginx:1.25', '--replicas=2', '--port=80'), /deployment.apps\/web created/);
    const d = await json('deployment', 'web');
    assert.equal(d['spec']['replicas'], 2);
    assert.deepEqual(d['spec']['selector'], { matchLabels: { app: 'web' } });
    const c = d['spec']['template']['spec']['containers'][0];
    assert.equal(c['image'], 'nginx:1.25');
    assert.deepEqual(c['ports'], [{ containerPort: 80, protocol: 'TCP' }]);
    assert.equal(d['spec']['strategy']['type'], 'RollingUpdate'); // defaulted from the empty strategy {}
    assert.equal(d['metadata']['generation'], 1);
  });

  test('create service clusterip --tcp', async () => {
    assert.match(await ok('create', 'service', 'clusterip', 'svc', '--tcp=80:8080', '--tcp=443'), /service\/svc created/);
    const s = await json('service', 'svc');
    assert.equal(s['spec']['type'], 'ClusterIP');
    assert.match(s['spec']['clusterIP'], /^\d+\.\d+\.\d+\.\d+$/);
    assert.deepEqual(s['spec']['ports'].map((p: Record<string, unknown>) => [p['name'], p['port'], p['targetPort'], p['protocol']]),
      [['80-8080', 80, 8080, 'TCP'], ['443', 443, 443, 'TCP']]);
  });

  test('create role (rbac) and priorityclass', async () => {
    assert.match(await ok('create', 'role', 'reader', '--verb=get,list', '--resource=pods'), /role.rbac.authorization.k8s.io\/reader created/);
    assert.deepEqual((await json('role', 'reader'))['rules'], [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }]);
    assert.match(await ok('create', 'priorityclass', 'high', '--value=1000'), /priorityclass.scheduling.k8s.io\/high created/);
    assert.equal((await json('priorityclass', 'high'))['value'], 1000);
  });

  test('create job --image -- command', async () => {
    assert.match(await ok('create', 'job', 'pi', '--image=busybox:1.36', '--', 'sh', '-c', 'echo hi'), /job.batch\/pi created/);
    const j = await json('job', 'pi');
    assert.equal(j['spec']['completions'], 1); // defaulted
    assert.equal(j['spec']['template']['spec']['restartPolicy'], 'Never');
    assert.deepEqual(j['spec']['template']['spec']['containers'][0]['command'], ['sh', '-c', 'echo hi']);
    assert.equal(j['spec']['selector']['matchLabels']['batch.kubernetes.io/controller-uid'], j['metadata']['uid']);
  });

  test('create cronjob, then create job --from=cronjob/x', async () => {
    assert.match(await ok('create', 'cronjob', 'tick', '--image=busybox:1.36', '--schedule=*/5 * * * *', '--restart=OnFailure', '--', 'date'),
      /cronjob.batch\/tick created/);
    const cj = await json('cronjob', 'tick');
    assert.equal(cj['spec']['schedule'], '*/5 * * * *');
    assert.equal(cj['spec']['concurrencyPolicy'], 'Allow');
    assert.match(await ok('create', 'job', 'tick-manual', '--from=cronjob/tick'), /job.batch\/tick-manual created/);
    const j = await json('job', 'tick-manual');
    assert.equal(j['metadata']['annotations']['cronjob.kubernetes.io/instantiate'], 'manual');
    assert.deepEqual(j['metadata']['ownerReferences'], [{ apiVersion: 'batch/v1', kind: 'CronJob', name: 'tick', uid: cj['metadata']['uid'], controller: true }]);
    const { labels: _l, ...podSpecOnly } = j['spec']['template']['metadata'] as Record<string, unknown>;
    assert.deepEqual(podSpecOnly, {});
    assert.deepEqual(j['spec']['template']['spec'], cj['spec']['jobTemplate']['spec']['template']['spec']);
  });

  test('create pdb --min-available / --max-unavailable', async () => {
    assert.match(await ok('create', 'pdb', 'guard', '--selector=app=web', '--min-available=1'), /poddisruptionbudget.policy\/guard created/);
    assert.deepEqual((await json('pdb', 'guard'))['spec'], { minAvailable: 1, selector: { matchLabels: { app: 'web' } } });
    assert.match(await ok('create', 'pdb', 'guard2', '--selector=app=web', '--max-unavailable=25%'), /poddisruptionbudget.policy\/guard2 created/);
    assert.equal((await json('pdb', 'guard2'))['spec']['maxUnavailable'], '25%');
  });

  test('debug node/x and debug --copy-to create their Pods', async () => {
    const node = await run(['create', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } }));
    assert.equal(node.code, 0, node.stderr);
    assert.match(await ok('debug', 'node/n1', '--image=busybox:1.36', '--profile=general', '--', 'true'), /Creating debugging pod node-debugger-n1-\w+ with container debugger on node n1/);
    const dbg = (await json('pods'))['items'].find((p: Record<string, any>) => p['metadata']['name'].startsWith('node-debugger-n1-'));
    assert.equal(dbg['spec']['nodeName'], 'n1');
    assert.equal(dbg['spec']['hostPID'], true);
    await ok('run', 'app', '--image=busybox:1.36', '--', 'sleep', '3600');
    await ok('debug', 'app', '--copy-to=app-debug', '--image=busybox:1.36', '--container=dbg', '--profile=general', '--', 'true');
    assert.deepEqual((await json('pod', 'app-debug'))['spec']['containers'].map((c: Record<string, unknown>) => c['name']), ['app', 'dbg']);
  });

  test('auth can-i', async () => {
    assert.equal((await ok('auth', 'can-i', 'get', 'pods')).trim(), 'yes');
    assert.equal((await ok('auth', 'can-i', 'create', 'deployments', '-n', 'pb')).trim(), 'yes');
  });

  test('create token', async () => {
    await ok('create', 'serviceaccount', 'robot');
    const token = (await ok('create', 'token', 'robot', '--duration=10m', '--audience=a1')).trim();
    const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as { sub: string; aud: string[]; exp: number; iat: number };
    assert.equal(claims.sub, 'system:serviceaccount:default:robot');
    assert.deepEqual(claims.aud, ['a1']);
    assert.equal(claims.exp - claims.iat, 600);
  });
});
