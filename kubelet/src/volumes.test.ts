import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Pod, Volume } from '@mk8s/api';
import type { ConfigSource } from './env.js';
import { ServiceAccountTokenManager, setupVolume, setupVolumes, VolumeError } from './volumes.js';

const pod: Pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'team', uid: 'u1' }, spec: { serviceAccountName: 'robot', containers: [] } };

function fakeRequester(nowRef: { ms: number }) {
  const calls: { ns: string; sa: string; body: any }[] = []; // eslint-disable-line @typescript-eslint/no-explicit-any
  const request = async (ns: string, sa: string, body: unknown) => {
    calls.push({ ns, sa, body: body as never });
    const exp = (body as { spec: { expirationSeconds: number } }).spec.expirationSeconds;
    return { status: { token: `tok-${calls.length}`, expirationTimestamp: new Date(nowRef.ms + exp * 1000).toISOString() } };
  };
  return { calls, request };
}

test('token manager: binds the token to the pod, caches it, and fetches a new one after 80% of its life', async () => {
  const now = { ms: Date.parse('2026-01-01T00:00:00Z') };
  const r = fakeRequester(now);
  const m = new ServiceAccountTokenManager({ request: r.request, now: () => now.ms });
  assert.equal(await m.get(pod, { expirationSeconds: 3607 }), 'tok-1');
  assert.deepEqual(r.calls[0], { ns: 'team', sa: 'robot', body: {
    apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest',
    spec: { expirationSeconds: 3607, boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'web', uid: 'u1' } },
  } });
  now.ms += 0.79 * 3607 * 1000;
  assert.equal(await m.get(pod, { expirationSeconds: 3607 }), 'tok-1');
  now.ms += 0.02 * 3607 * 1000;
  assert.equal(await m.get(pod, { expirationSeconds: 3607 }), 'tok-2');
  assert.equal(await m.get(pod, { expirationSeconds: 3607, audience: 'vault' }), 'tok-3');
  assert.deepEqual(r.calls[2]!.body.spec.audiences, ['vault']);
  m.forget('u1');
  assert.equal(await m.get(pod, { expirationSeconds: 3607 }), 'tok-4');
});

test('projected volume: token, ca.crt from the ConfigMap and the namespace from the downward API', async (t) => {
  const root = await mkdtemp(join(tmpdir(), 'mk8s-volumes-'));
  t.after(() => rm(root, { recursive: true, force: true }));
  const v: Volume = { name: 'kube-api-access-abcde', projected: { defaultMode: 420, sources: [
    { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
    { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
    { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
  ] } };
  const src: ConfigSource = {
    configMap: async (_ns, name) => (name === 'kube-root-ca.crt' ? { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { 'ca.crt': 'PEM' } } : undefined),
    secret: async () => undefined,
    serviceAccountToken: async (p, req) => `jwt-for-${p.metadata?.name}-${req.expirationSeconds}`,
  };
  const dir = await setupVolume(root, pod, v, src);
  assert.equal(await readFile(join(dir, 'token'), 'utf8'), 'jwt-for-web-3607');
  assert.equal(await readFile(join(dir, 'ca.crt'), 'utf8'), 'PEM');
  assert.equal(await readFile(join(dir, 'namespace'), 'utf8'), 'team');

  const failing: ConfigSource = { ...src, serviceAccountToken: async () => { throw new Error('serviceaccounts "robot" not found'); } };
  await assert.rejects(setupVolume(root, pod, v, failing), (err: Error) => err instanceof VolumeError && err.message === 'failed to fetch token: serviceaccounts "robot" not found');
});

test('projected sources are fetched together; a failure names the first failing volume in spec order', async (t) => {
  const root = await mkdtemp(join(tmpdir(), 'mk8s-volumes-'));
  t.after(() => rm(root, { recursive: true, force: true }));
  // The token answers only once the ConfigMap was asked for: fetched one after the other, this would never settle.
  let cmAsked!: () => void;
  const cmSeen = new Promise<void>((r) => { cmAsked = r; });
  const src: ConfigSource = {
    configMap: async (_ns, name) => { cmAsked(); return name === 'ca' ? { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { 'ca.crt': 'PEM' } } : undefined; },
    secret: async () => undefined,
    serviceAccountToken: async () => { await cmSeen; return 'jwt'; },
  };
  const projected: Volume = { name: 'api', projected: { sources: [
    { serviceAccountToken: { path: 'token' } },
    { configMap: { name: 'ca', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
  ] } };
  const paths = await setupVolumes(root, { ...pod, spec: { containers: [], volumes: [projected] } }, src);
  assert.equal(await readFile(join(paths.get('api')!, 'token'), 'utf8'), 'jwt');
  assert.equal(await readFile(join(paths.get('api')!, 'ca.crt'), 'utf8'), 'PEM');

  // The second volume fails first in time; the error is still the first volume's.
  let secondFailed!: () => void;
  const second = new Promise<void>((r) => { secondFailed = r; });
  const slow: ConfigSource = {
    configMap: async (_ns, name) => { if (name === 'b') { secondFailed(); return undefined; } await second; return undefined; },
    secret: async () => undefined,
  };
  const vols: Volume[] = [{ name: 'va', configMap: { name: 'a' } }, { name: 'vb', configMap: { name: 'b' } }];
  await assert.rejects(setupVolumes(root, { ...pod, spec: { containers: [], volumes: vols } }, slow), (err: Error) => err instanceof VolumeError && err.message === 'configmap "a" not found');
});
