/**
 * ServiceAccount and PodSecurity admission and the TokenRequest API as the real kubectl 1.32 sees
 * them (apiserver on a real etcd): the 403 message, `Warning:` lines, the token volume in the pod,
 * `kubectl create token`.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { realClock } from '@mk8s/component-base';
import { kubectlRunner, startTestApiServer, type TestApiServer } from '../../testing/index.js';
import { ServiceAccountTokenIssuer } from '../../auth/service-account.js';

describe('kubectl with ServiceAccount and PodSecurity admission', () => {
  let srv: TestApiServer;
  const cache = mkdtempSync(join(tmpdir(), 'mk8s-kubectl-cache-'));
  // Asynchronous: the apiserver runs in this process and must keep serving while kubectl waits.
  const { run: kubectl } = kubectlRunner({ kubeconfig: () => srv.kubeconfigPath, cacheDir: cache });
  before(async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    srv = await startTestApiServer({
      etcdMembers: 1, enableAdmissionPlugins: ['ServiceAccount', 'PodSecurity'],
      serviceAccountTokenIssuer: new ServiceAccountTokenIssuer({ privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string, clock: realClock }),
    });
  });
  after(async () => {
    await srv?.stop();
    rmSync(cache, { recursive: true, force: true });
  });

  test('no default SA: refused with upstream\'s message; with it, the pod gets kube-api-access', async () => {
    const pod = 'apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers:\n  - {name: c, image: busybox}\n';
    const refused = await kubectl(['apply', '-f', '-'], pod);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /pods "web" is forbidden: error looking up service account default\/default: serviceaccount "default" not found/);
    assert.equal((await kubectl(['create', 'serviceaccount', 'default'])).code, 0);
    assert.equal((await kubectl(['apply', '-f', '-'], pod)).code, 0);
    const mounts = (await kubectl(['get', 'pod', 'web', '-o', 'jsonpath={.spec.containers[0].volumeMounts[0].mountPath} {.spec.volumes[0].name}'])).stdout;
    assert.match(mounts, /^\/var\/run\/secrets\/kubernetes\.io\/serviceaccount kube-api-access-[a-z0-9]{5}$/);
  });

  test('kubectl create token prints a token for the ServiceAccount', async () => {
    const r = await kubectl(['create', 'token', 'default', '--duration', '20m']);
    assert.equal(r.code, 0, r.stderr);
    const claims = JSON.parse(Buffer.from(r.stdout.trim().split('.')[1]!, 'base64url').toString()) as { sub: string; exp: number; iat: number };
    assert.equal(claims.sub, 'system:serviceaccount:default:default');
    assert.equal(claims.exp - claims.iat, 1200);
  });

  test('PodSecurity: enforce refuses with the exact message, warn prints Warning lines, deployments only warn', async () => {
    assert.equal((await kubectl(['create', 'namespace', 'psa'])).code, 0);
    assert.equal((await kubectl(['create', 'serviceaccount', 'default', '-n', 'psa'])).code, 0);
    const label = await kubectl(['label', 'namespace', 'psa', 'pod-security.kubernetes.io/enforce=baseline', 'pod-security.kubernetes.io/warn=restricted']);
    assert.equal(label.code, 0, label.stderr);
    const priv = await kubectl(['-n', 'psa', 'run', 'priv', '--image', 'busybox', '--overrides', '{"spec":{"hostNetwork":true}}']);
    assert.notEqual(priv.code, 0);
    assert.match(priv.stderr, /Error from server \(Forbidden\): pods "priv" is forbidden: violates PodSecurity "baseline:latest": host namespaces \(hostNetwork=true\)/);
    const plain = await kubectl(['-n', 'psa', 'run', 'plain', '--image', 'busybox']);
    assert.equal(plain.code, 0, plain.stderr);
    assert.match(plain.stderr, /^Warning: would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false \(container "plain" must set securityContext.allowPrivilegeEscalation=false\)/m);
    const deploy = await kubectl(['-n', 'psa', 'create', 'deployment', 'd', '--image', 'busybox']);
    assert.equal(deploy.code, 0, deploy.stderr);
    assert.match(deploy.stderr, /^Warning: would violate PodSecurity "restricted:latest": /m);
  });
});
