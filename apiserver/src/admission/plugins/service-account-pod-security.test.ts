import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '@mk8s/component-base';
import { FakeClock } from '@mk8s/component-base/testing';
import { MemoryStorage } from '../../testing/memory-storage.js';
import { buildApiServer } from '../../server.js';
import { ServiceAccountTokenIssuer } from '../../auth/service-account.js';
import { policyToEvaluate } from './pod-security.js';
import { createToken } from '../../registry/core/serviceaccounts/token.js';
import { errors, type KubeObject } from '@mk8s/api';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const keyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

async function setup(t: { after(fn: () => unknown): void }, plugins: string[], withIssuer = false, admissionControlConfigFile?: string) {
  const storage = new MemoryStorage();
  const clock = new FakeClock(Date.parse('2026-01-01T00:00:00Z'));
  const app = await buildApiServer({
    storage, logger: silentLogger(), clock, enableAdmissionPlugins: plugins, ...(admissionControlConfigFile ? { admissionControlConfigFile } : {}),
    ...(withIssuer ? { serviceAccountTokenIssuer: new ServiceAccountTokenIssuer({ privateKeyPem: keyPem, clock }) } : {}),
  });
  await app.ready();
  t.after(() => app.close());
  const post = (url: string, payload: unknown) => app.inject({ method: 'POST', url, payload: payload as Json });
  return { app, clock, post };
}

/** Steps the fake clock (the plugin's waits between live reads) until the request settles. */
async function advancing<T>(clock: FakeClock, p: Promise<T>): Promise<T> {
  let done = false;
  void p.finally(() => { done = true; }).catch(() => undefined);
  while (!done) { await new Promise((r) => setImmediate(r)); clock.step(250); }
  return p;
}

const pod = (name: string, spec: Json = {}, meta: Json = {}) => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name, ...meta }, spec: { containers: [{ name: 'c', image: 'busybox' }], ...spec },
});
const sa = (name: string, extra: Json = {}) => ({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name }, ...extra });
const ns = (name: string, labels: Record<string, string>) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } });

describe('ServiceAccount admission', () => {
  test('a pod whose ServiceAccount does not exist is refused with upstream\'s message (after 10 live reads for default)', async (t) => {
    const { post, clock } = await setup(t, ['ServiceAccount']);
    const res = await advancing(clock, post('/api/v1/namespaces/default/pods', pod('web')));
    assert.equal(res.statusCode, 403, res.body);
    assert.equal(res.json().message, 'pods "web" is forbidden: error looking up service account default/default: serviceaccount "default" not found');
    const gen = await advancing(clock, post('/api/v1/namespaces/default/pods', { ...pod(''), metadata: { generateName: 'web-' } }));
    assert.equal(gen.json().message, 'pods "web-" is forbidden: error looking up service account default/default: serviceaccount "default" not found');
    const other = await post('/api/v1/namespaces/default/pods', pod('x', { serviceAccountName: 'ghost' }));
    assert.equal(other.json().message, 'pods "x" is forbidden: error looking up service account default/ghost: serviceaccount "ghost" not found');
  });

  test('the default SA created while the pod waits is found (the serviceaccount controller\'s race)', async (t) => {
    const { post, clock } = await setup(t, ['ServiceAccount']);
    const pending = post('/api/v1/namespaces/default/pods', pod('web'));
    for (let i = 0; i < 3; i++) { await new Promise((r) => setImmediate(r)); clock.step(200); }
    assert.equal((await post('/api/v1/namespaces/default/serviceaccounts', sa('default'))).statusCode, 201);
    const res = await advancing(clock, pending);
    assert.equal(res.statusCode, 201, res.body);
  });

  test('defaults the SA to default and mounts kube-api-access-xxxxx in every container and init container', async (t) => {
    const { post } = await setup(t, ['ServiceAccount']);
    assert.equal((await post('/api/v1/namespaces/default/serviceaccounts', sa('default', { imagePullSecrets: [{ name: 'reg' }] }))).statusCode, 201);
    const res = await post('/api/v1/namespaces/default/pods', pod('web', { initContainers: [{ name: 'i', image: 'busybox' }] }));
    assert.equal(res.statusCode, 201, res.body);
    const spec = res.json().spec;
    assert.equal(spec.serviceAccountName, 'default');
    assert.equal(spec.serviceAccount, 'default');
    assert.deepEqual(spec.imagePullSecrets, [{ name: 'reg' }]);
    assert.equal(spec.volumes.length, 1);
    const vol = spec.volumes[0];
    assert.match(vol.name, /^kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    assert.deepEqual(vol.projected, {
      defaultMode: 420,
      sources: [
        { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
        { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
      ],
    });
    for (const c of [...spec.initContainers, ...spec.containers]) {
      assert.deepEqual(c.volumeMounts, [{ name: vol.name, readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }]);
    }
  });

  const automount: { name: string; podValue?: boolean; saValue?: boolean; mounted: boolean }[] = [
    { name: 'pod false', podValue: false, mounted: false },
    { name: 'SA false', saValue: false, mounted: false },
    { name: 'pod true wins over SA false', podValue: true, saValue: false, mounted: true },
    { name: 'pod false wins over SA true', podValue: false, saValue: true, mounted: false },
  ];
  for (const tc of automount) {
    test(`automountServiceAccountToken: ${tc.name}`, async (t) => {
      const { post } = await setup(t, ['ServiceAccount']);
      await post('/api/v1/namespaces/default/serviceaccounts', sa('robot', tc.saValue === undefined ? {} : { automountServiceAccountToken: tc.saValue }));
      const res = await post('/api/v1/namespaces/default/pods', pod('web', {
        serviceAccountName: 'robot', ...(tc.podValue === undefined ? {} : { automountServiceAccountToken: tc.podValue }),
      }));
      assert.equal(res.statusCode, 201, res.body);
      assert.equal((res.json().spec.volumes ?? []).length, tc.mounted ? 1 : 0);
    });
  }

  test('a container with its own mount at the token path is left alone', async (t) => {
    const { post } = await setup(t, ['ServiceAccount']);
    await post('/api/v1/namespaces/default/serviceaccounts', sa('default'));
    const own = { name: 'mine', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' };
    const res = await post('/api/v1/namespaces/default/pods', pod('web', {
      volumes: [{ name: 'mine', emptyDir: {} }],
      containers: [{ name: 'a', image: 'busybox', volumeMounts: [own] }, { name: 'b', image: 'busybox' }],
    }));
    const spec = res.json().spec;
    assert.deepEqual(spec.containers[0].volumeMounts, [own]);
    assert.equal(spec.containers[1].volumeMounts[0].mountPath, '/var/run/secrets/kubernetes.io/serviceaccount');
    assert.equal(spec.volumes.length, 2);
  });

  test('off unless enabled: pods are admitted without any ServiceAccount', async (t) => {
    const { post } = await setup(t, []);
    const res = await post('/api/v1/namespaces/default/pods', pod('web'));
    assert.equal(res.statusCode, 201);
    assert.equal(res.json().spec.volumes, undefined);
  });
});

describe('PodSecurity admission', () => {
  test('enforce=restricted refuses with upstream\'s message; baseline refuses only privileged', async (t) => {
    const { post } = await setup(t, ['PodSecurity']);
    await post('/api/v1/namespaces', ns('r', { 'pod-security.kubernetes.io/enforce': 'restricted' }));
    const res = await post('/api/v1/namespaces/r/pods', pod('x', { containers: [{ name: 'c', image: 'busybox', securityContext: { privileged: true } }] }));
    assert.equal(res.statusCode, 403);
    assert.equal(res.json().reason, 'Forbidden');
    assert.deepEqual(res.json().details, { name: 'x', kind: 'pods' });
    assert.equal(res.json().message, 'pods "x" is forbidden: violates PodSecurity "restricted:latest": '
      + 'privileged (container "c" must not set securityContext.privileged=true), '
      + 'allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), '
      + 'unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), '
      + 'runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), '
      + 'seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")');

    await post('/api/v1/namespaces', ns('b', { 'pod-security.kubernetes.io/enforce': 'baseline', 'pod-security.kubernetes.io/enforce-version': 'v1.32' }));
    assert.equal((await post('/api/v1/namespaces/b/pods', pod('plain'))).statusCode, 201);
    const priv = await post('/api/v1/namespaces/b/pods', pod('y', { hostNetwork: true }));
    assert.equal(priv.json().message, 'pods "y" is forbidden: violates PodSecurity "baseline:v1.32": host namespaces (hostNetwork=true)');
  });

  test('warn adds a Warning header and admits; deployments get warnings, never refusals', async (t) => {
    const { post } = await setup(t, ['PodSecurity']);
    await post('/api/v1/namespaces', ns('w', { 'pod-security.kubernetes.io/warn': 'baseline', 'pod-security.kubernetes.io/enforce': 'baseline' }));
    const ok = await post('/api/v1/namespaces/w/pods', pod('fine'));
    assert.equal(ok.headers['warning'], undefined);
    await post('/api/v1/namespaces', ns('w2', { 'pod-security.kubernetes.io/warn': 'restricted' }));
    const res = await post('/api/v1/namespaces/w2/pods', pod('x'));
    assert.equal(res.statusCode, 201);
    assert.match(String(res.headers['warning']), /^299 - "would violate PodSecurity \\"restricted:latest\\": allowPrivilegeEscalation != false/);
    const deploy = await post('/apis/apps/v1/namespaces/w/deployments', {
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' },
      spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { hostPID: true, containers: [{ name: 'c', image: 'busybox' }] } } },
    });
    assert.equal(deploy.statusCode, 201, deploy.body);
    assert.equal(deploy.headers['warning'], '299 - "would violate PodSecurity \\"baseline:latest\\": host namespaces (hostPID=true)"');
  });

  test('labelling a namespace enforce warns about existing violating pods; invalid labels are 422', async (t) => {
    const { app, post } = await setup(t, ['PodSecurity']);
    await post('/api/v1/namespaces', ns('n', {}));
    await post('/api/v1/namespaces/n/pods', pod('a', { hostNetwork: true }));
    await post('/api/v1/namespaces/n/pods', pod('b', { hostNetwork: true }));
    const res = await app.inject({
      method: 'PATCH', url: '/api/v1/namespaces/n', headers: { 'content-type': 'application/merge-patch+json' },
      payload: { metadata: { labels: { 'pod-security.kubernetes.io/enforce': 'baseline' } } },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['warning'], '299 - "existing pods in namespace \\"n\\" violate the new PodSecurity enforce level \\"baseline:latest\\"", '
      + '299 - "a (and 1 other pod): host namespaces"');
    const bad = await post('/api/v1/namespaces', ns('bad', { 'pod-security.kubernetes.io/enforce': 'strict' }));
    assert.equal(bad.statusCode, 422);
    assert.match(bad.json().message, /metadata.labels\[pod-security.kubernetes.io\/enforce\]: Invalid value: "strict"/);
  });

  test('--admission-control-config-file: defaults for unlabelled namespaces, exemptions by namespace, user and runtimeClass', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'mk8s-psa-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'psa.yaml'), [
      'apiVersion: pod-security.admission.config.k8s.io/v1', 'kind: PodSecurityConfiguration',
      'defaults: {enforce: baseline, enforce-version: v1.32, warn: restricted}',
      'exemptions: {namespaces: [free], runtimeClasses: [kata], usernames: []}', '',
    ].join('\n'));
    writeFileSync(join(dir, 'admission.yaml'), [
      'apiVersion: apiserver.config.k8s.io/v1', 'kind: AdmissionConfiguration', 'plugins:', '- name: PodSecurity', '  path: psa.yaml', '',
    ].join('\n'));
    const { post } = await setup(t, ['PodSecurity'], false, join(dir, 'admission.yaml'));
    const host = await post('/api/v1/namespaces/default/pods', pod('h', { hostNetwork: true }));
    assert.equal(host.statusCode, 403);
    assert.equal(host.json().message, 'pods "h" is forbidden: violates PodSecurity "baseline:v1.32": host namespaces (hostNetwork=true)');
    const plain = await post('/api/v1/namespaces/default/pods', pod('p'));
    assert.equal(plain.statusCode, 201);
    assert.match(String(plain.headers['warning']), /would violate PodSecurity \\"restricted:latest\\"/);
    await post('/api/v1/namespaces', ns('free', {}));
    assert.equal((await post('/api/v1/namespaces/free/pods', pod('h', { hostNetwork: true }))).statusCode, 201);
    assert.equal((await post('/api/v1/namespaces/default/pods', pod('k', { hostNetwork: true, runtimeClassName: 'kata' }))).statusCode, 201);
    // Labels still override the defaults.
    await post('/api/v1/namespaces', ns('open', { 'pod-security.kubernetes.io/enforce': 'privileged', 'pod-security.kubernetes.io/warn': 'privileged' }));
    const open = await post('/api/v1/namespaces/open/pods', pod('h', { hostNetwork: true }));
    assert.equal(open.statusCode, 201);
    assert.equal(open.headers['warning'], undefined);
  });

  test('policyToEvaluate: invalid enforce fails closed, invalid warn fails open, bad versions are latest', () => {
    const { policy, errs } = policyToEvaluate({
      'pod-security.kubernetes.io/enforce': 'x', 'pod-security.kubernetes.io/warn': 'y', 'pod-security.kubernetes.io/audit-version': 'v2',
    });
    assert.deepEqual(policy, { enforce: { level: 'restricted', version: 'latest' }, warn: { level: 'privileged', version: 'latest' }, audit: { level: 'privileged', version: 'latest' } });
    assert.equal(errs.length, 3);
  });
});

describe('TokenRequest (serviceaccounts/token)', () => {
  test('issues a bound token with Kubernetes claims; validates expirationSeconds and the bound object', async (t) => {
    const { post } = await setup(t, [], true);
    const saObj = (await post('/api/v1/namespaces/default/serviceaccounts', sa('robot'))).json();
    const p = (await post('/api/v1/namespaces/default/pods', pod('web', { serviceAccountName: 'robot' }))).json();
    const res = await post('/api/v1/namespaces/default/serviceaccounts/robot/token', {
      apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest',
      spec: { audiences: ['api'], expirationSeconds: 600, boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'web' } },
    });
    assert.equal(res.statusCode, 201, res.body);
    const body = res.json();
    assert.equal(body.kind, 'TokenRequest');
    assert.equal(body.status.expirationTimestamp, '2026-01-01T00:10:00Z');
    assert.deepEqual(body.spec.boundObjectRef, { kind: 'Pod', apiVersion: 'v1', name: 'web', uid: p.metadata.uid });
    const { jti, ...claims } = JSON.parse(Buffer.from(body.status.token.split('.')[1], 'base64url').toString());
    assert.match(jti, /^[0-9a-f-]{36}$/);
    const now = Date.parse('2026-01-01T00:00:00Z') / 1000;
    assert.deepEqual(claims, {
      iss: 'https://kubernetes.default.svc.cluster.local', sub: 'system:serviceaccount:default:robot', aud: ['api'],
      exp: now + 600, iat: now, nbf: now,
      'kubernetes.io': { namespace: 'default', serviceaccount: { name: 'robot', uid: saObj.metadata.uid }, pod: { name: 'web', uid: p.metadata.uid } },
    });

    // The kubelet's 3607 s pod-bound token is extended to a year, with warnafter at 3607 s; the answer still says 3607 s.
    const kubeletTok = (await post('/api/v1/namespaces/default/serviceaccounts/robot/token', {
      spec: { expirationSeconds: 3607, boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'web', uid: p.metadata.uid } },
    })).json();
    assert.equal(kubeletTok.status.expirationTimestamp, '2026-01-01T01:00:07Z');
    const ext = JSON.parse(Buffer.from(kubeletTok.status.token.split('.')[1], 'base64url').toString());
    assert.equal(ext.exp - ext.iat, 365 * 24 * 3600);
    assert.equal(ext['kubernetes.io'].warnafter, ext.iat + 3607);
    const header = JSON.parse(Buffer.from(kubeletTok.status.token.split('.')[0], 'base64url').toString());
    assert.equal(header.alg, 'RS256');
    assert.match(header.kid, /^[\w-]{43}$/);
    const dflt = (await post('/api/v1/namespaces/default/serviceaccounts/robot/token', { spec: {} })).json();
    assert.equal(dflt.spec.expirationSeconds, 3600);
    assert.deepEqual(dflt.spec.audiences, ['https://kubernetes.default.svc.cluster.local']);

    const short = await post('/api/v1/namespaces/default/serviceaccounts/robot/token', { spec: { expirationSeconds: 599 } });
    assert.equal(short.statusCode, 422);
    assert.equal(short.json().message, 'TokenRequest.authentication.k8s.io "robot" is invalid: spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes');
    const missing = await post('/api/v1/namespaces/default/serviceaccounts/nobody/token', { spec: {} });
    assert.equal(missing.statusCode, 404);
    assert.equal(missing.json().message, 'serviceaccounts "nobody" not found');
    const otherSA = await post('/api/v1/namespaces/default/serviceaccounts', sa('other'));
    assert.equal(otherSA.statusCode, 201);
    const wrong = await post('/api/v1/namespaces/default/serviceaccounts/other/token', { spec: { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'web' } } });
    assert.equal(wrong.statusCode, 400);
    assert.equal(wrong.json().message, 'cannot bind token for serviceaccount "other" to pod running with serviceaccount "robot"');
    const uid = await post('/api/v1/namespaces/default/serviceaccounts/robot/token', { spec: { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'web', uid: 'nope' } } });
    assert.equal(uid.statusCode, 409);
  });

  test('without a signing key the subresource is not served', async (t) => {
    const { post } = await setup(t, []);
    await post('/api/v1/namespaces/default/serviceaccounts', sa('robot'));
    assert.equal((await post('/api/v1/namespaces/default/serviceaccounts/robot/token', { spec: {} })).statusCode, 404);
  });
});

test('TokenRequest by a kubelet: only bound to a pod on its own node (NodeRestriction)', async () => {
  const clock = new FakeClock(Date.parse('2026-01-01T00:00:00Z'));
  const objs: Record<string, KubeObject> = {
    'sa/default': { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default', namespace: 'ns', uid: 's1' } },
    'pod/mine': { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'mine', namespace: 'ns', uid: 'p1' }, spec: { nodeName: 'n1', serviceAccountName: 'default' } } as KubeObject,
    'pod/theirs': { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'theirs', namespace: 'ns', uid: 'p2' }, spec: { nodeName: 'n2', serviceAccountName: 'default' } } as KubeObject,
  };
  const get = (kind: string) => async (_ns: string, name: string) => { const o = objs[`${kind}/${name}`]; if (!o) throw errors.notFound(`${kind}s`, name); return o; };
  const deps = { issuer: new ServiceAccountTokenIssuer({ privateKeyPem: keyPem, clock }), defaultAudiences: ['x'], now: () => clock.now(),
    getServiceAccount: get('sa'), getPod: get('pod'), getSecret: get('secret') };
  const kubelet = { username: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] };
  const ref = (name: string, uid: string) => ({ spec: { boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name, uid } } });
  assert.ok(((await createToken(deps, 'ns', 'default', ref('mine', 'p1'), kubelet))['status'] as Json).token);
  const refused: [Json, string][] = [
    [{ spec: {} }, 'node requested token not bound to a pod'],
    [{ spec: { boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'mine' } } }, 'node requested token with a pod binding without a uid'],
    [ref('theirs', 'p2'), 'node requested token bound to a pod scheduled on a different node'],
  ];
  for (const [body, why] of refused) {
    await assert.rejects(createToken(deps, 'ns', 'default', body, kubelet), (err: Error) => err.message === `serviceaccounts "default" is forbidden: ${why}`);
  }
  assert.ok(await createToken(deps, 'ns', 'default', { spec: {} }, { username: 'admin', groups: ['system:masters'] }));
});
