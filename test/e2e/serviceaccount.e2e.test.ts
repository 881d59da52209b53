/**
 * ServiceAccounts end to end on the launched cluster (ServiceAccount and PodSecurity admission on):
 * a pod gets the kube-api-access projected volume, its token file (read with kubectl exec)
 * authenticates as system:serviceaccount:<ns>:default until the pod is deleted, ca.crt and
 * namespace sit next to it, and a namespace labelled enforce=restricted refuses a privileged pod
 * with Kubernetes' message.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { KUBECONFIG, ROOT, kubectl, kubectlOk, uniqueName, waitFor } from './lib/cluster.js';

const CA = join(ROOT, '.mk8s', 'pki', 'ca.crt');
const kubeconfigText = existsSync(KUBECONFIG) ? readFileSync(KUBECONFIG, 'utf8') : '';
const server = /server:\s*(https:\/\/\S+)/.exec(kubeconfigText)?.[1];
const TOKEN_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** POST with only a bearer token (no client certificate), trusting the cluster CA. */
function postAs(token: string, path: string, body: unknown): Promise<{ code: number; body: string }> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const r = request(`${server}${path}`, {
      method: 'POST', ca: readFileSync(CA), timeout: 10_000,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
    }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => { text += d.toString(); });
      res.on('end', () => resolve({ code: res.statusCode ?? 0, body: text }));
    });
    r.on('timeout', () => r.destroy(new Error('timeout')));
    r.on('error', reject);
    r.end(payload);
  });
}
const whoami = (token: string) => postAs(token, '/apis/authentication.k8s.io/v1/selfsubjectreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' });

describe('ServiceAccount tokens and PodSecurity on the launched cluster', () => {
  const ns = uniqueName('e2e-sa');
  const restricted = uniqueName('e2e-psa');
  // The local cluster is always secure: an insecure one is a failure, not a reason to skip.
  test('the cluster has its CA and an HTTPS kubeconfig', () => {
    assert.ok(server, `${KUBECONFIG} has no https:// server`);
    assert.ok(existsSync(CA), `no cluster CA at ${CA}`);
  });
  before(() => {
    // The shared helper waits for the `default` ServiceAccount after "namespace/x created".
    kubectlOk(['create', 'namespace', ns]);
    kubectlOk(['create', 'namespace', restricted]);
  });
  after(() => {
    kubectl(['delete', 'namespace', ns, '--wait=false']);
    kubectl(['delete', 'namespace', restricted, '--wait=false']);
  });

  test('a new namespace has the default ServiceAccount and kube-root-ca.crt', async () => {
    assert.equal(kubectlOk(['-n', ns, 'get', 'serviceaccount', 'default', '-o', 'name']).trim(), 'serviceaccount/default');
    const ca = await waitFor(() => {
      const r = kubectl(['-n', ns, 'get', 'configmap', 'kube-root-ca.crt', '-o', 'jsonpath={.data.ca\\.crt}']);
      return r.code === 0 && r.stdout.includes('BEGIN CERTIFICATE') ? r.stdout : undefined;
    }, { timeoutMs: 30_000, what: 'kube-root-ca.crt' });
    assert.equal(ca.trim(), readFileSync(CA, 'utf8').trim());
  });

  test('a pod gets the token volume; its token authenticates as the ServiceAccount until the pod is deleted', async () => {
    kubectlOk(['-n', ns, 'apply', '-f', '-'], { input: `apiVersion: v1
kind: Pod
metadata: {name: reader}
spec:
  terminationGracePeriodSeconds: 0
  containers:
  - name: c
    image: busybox
    imagePullPolicy: IfNotPresent
    command: [sleep, "3600"]
` });
    const pod = JSON.parse(kubectlOk(['-n', ns, 'get', 'pod', 'reader', '-o', 'json'])) as {
      spec: { serviceAccountName: string; volumes: { name: string; projected?: unknown }[]; containers: { volumeMounts: { name: string; mountPath: string; readOnly?: boolean }[] }[] };
    };
    assert.equal(pod.spec.serviceAccountName, 'default');
    const vol = pod.spec.volumes.find((v) => v.name.startsWith('kube-api-access-'));
    assert.ok(vol?.projected, 'the kube-api-access projected volume');
    assert.deepEqual(pod.spec.containers[0]!.volumeMounts, [{ name: vol.name, mountPath: TOKEN_DIR, readOnly: true }]);
    await waitFor(() => kubectl(['-n', ns, 'get', 'pod', 'reader', '-o', 'jsonpath={.status.phase}']).stdout === 'Running', { timeoutMs: 120_000, what: 'the pod to run' });

    const token = kubectlOk(['-n', ns, 'exec', 'reader', '--', 'cat', `${TOKEN_DIR}/token`]).trim();
    assert.match(token, /^[\w-]+\.[\w-]+\.[\w-]+$/, 'a JWT');
    assert.equal(kubectlOk(['-n', ns, 'exec', 'reader', '--', 'cat', `${TOKEN_DIR}/namespace`]), ns);
    assert.match(kubectlOk(['-n', ns, 'exec', 'reader', '--', 'cat', `${TOKEN_DIR}/ca.crt`]), /BEGIN CERTIFICATE/);
    const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { sub: string; iat: number; 'kubernetes.io': { pod?: { name: string }; warnafter?: number } };
    assert.equal(claims.sub, `system:serviceaccount:${ns}:default`);
    assert.equal((claims['kubernetes.io'].warnafter ?? 0) - claims.iat, 3607, 'the kubelet\'s 3607 s token, extended with warnafter');
    assert.equal(claims['kubernetes.io'].pod?.name, 'reader');

    const me = await whoami(token);
    assert.equal(me.code, 201, me.body);
    assert.equal((JSON.parse(me.body) as { status: { userInfo: { username: string; groups: string[] } } }).status.userInfo.username, `system:serviceaccount:${ns}:default`);
    const review = JSON.parse(kubectlOk(['create', '--raw', '/apis/authentication.k8s.io/v1/tokenreviews', '-f', '-'], {
      input: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } }),
    })) as { status: { authenticated?: boolean; user?: { username?: string } } };
    assert.equal(review.status.authenticated, true);
    assert.equal(review.status.user?.username, `system:serviceaccount:${ns}:default`);
    const who = kubectl(['--token', token, '--server', server!, '--certificate-authority', CA, '--kubeconfig', '/dev/null', 'auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}']);
    assert.equal(who.stdout, `system:serviceaccount:${ns}:default`, who.stderr);
    // The default ServiceAccount holds no role: RBAC refuses it by name.
    const list = kubectl(['--token', token, '--server', server!, '--certificate-authority', CA, '--kubeconfig', '/dev/null', '-n', ns, 'get', 'secrets']);
    assert.match(list.stderr, new RegExp(`User "system:serviceaccount:${ns}:default" cannot list resource "secrets"`));

    kubectlOk(['-n', ns, 'delete', 'pod', 'reader', '--grace-period=0', '--force']);
    await waitFor(async () => (await whoami(token)).code === 401, { timeoutMs: 30_000, what: 'the deleted pod\'s token to be refused' });
  });

  test('kubectl create token issues a token for the ServiceAccount', () => {
    const r = kubectl(['-n', ns, 'create', 'token', 'default', '--duration', '10m']);
    assert.equal(r.code, 0, r.stderr);
    const claims = JSON.parse(Buffer.from(r.stdout.trim().split('.')[1]!, 'base64url').toString()) as { sub: string; exp: number; iat: number };
    assert.equal(claims.sub, `system:serviceaccount:${ns}:default`);
    assert.equal(claims.exp - claims.iat, 600);
  });

  test('enforce=restricted refuses a privileged pod with Kubernetes\' message; warn=baseline warns', () => {
    kubectlOk(['label', 'namespace', restricted, 'pod-security.kubernetes.io/enforce=restricted', 'pod-security.kubernetes.io/warn=restricted']);
    const r = kubectl(['-n', restricted, 'apply', '-f', '-'], { input: `apiVersion: v1
kind: Pod
metadata: {name: priv}
spec:
  containers:
  - name: c
    image: busybox
    securityContext: {privileged: true}
` });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /pods "priv" is forbidden: violates PodSecurity "restricted:latest": privileged \(container "c" must not set securityContext\.privileged=true\), allowPrivilegeEscalation != false \(container "c" must set securityContext\.allowPrivilegeEscalation=false\), unrestricted capabilities \(container "c" must set securityContext\.capabilities\.drop=\["ALL"\]\), runAsNonRoot != true \(pod or container "c" must set securityContext\.runAsNonRoot=true\), seccompProfile \(pod or container "c" must set securityContext\.seccompProfile\.type to "RuntimeDefault" or "Localhost"\)/);
    const d = kubectl(['-n', restricted, 'create', 'deployment', 'web', '--image', 'busybox']);
    assert.equal(d.code, 0, d.stderr);
    assert.match(d.stderr, /Warning: would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false/);
  });
});
