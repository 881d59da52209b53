import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ConfigMap, Container, Pod, Secret } from '@mk8s/api';
import { ContainerConfigError, expandVars, makeEnvironment, type ConfigSource } from './env.js';

for (const tc of [
  { in: 'a $(X) b', want: 'a 1 b' },
  { in: '$(MISSING)', want: '$(MISSING)' },
  { in: '$$(X)', want: '$(X)' },
  { in: 'plain $', want: 'plain $' },
  { in: '$(X)$(Y)', want: '12' },
]) test(`expandVars ${tc.in}`, () => assert.equal(expandVars(tc.in, new Map([['X', '1'], ['Y', '2']])), tc.want));

const pod: Pod = { metadata: { name: 'p', namespace: 'ns', uid: 'u', labels: { app: 'x' } }, spec: { nodeName: 'n1', containers: [] } };
const src = (cms: Record<string, ConfigMap>, secrets: Record<string, Secret> = {}): ConfigSource => ({
  configMap: async (_ns, name) => cms[name], secret: async (_ns, name) => secrets[name],
});
const ctx = { pod, podIP: '10.244.0.5', podIPs: ['10.244.0.5'], hostIP: '10.240.0.11', nodeName: 'n1' };

test('resolves envFrom, configMapKeyRef, secretKeyRef, fieldRef and expands earlier vars', async () => {
  const c: Container = {
    name: 'c',
    envFrom: [{ configMapRef: { name: 'cm' }, prefix: 'CM_' }],
    env: [
      { name: 'A', value: 'a' },
      { name: 'B', value: '$(A)-b' },
      { name: 'K', valueFrom: { configMapKeyRef: { name: 'cm', key: 'k' } } },
      { name: 'S', valueFrom: { secretKeyRef: { name: 's', key: 'pw' } } },
      { name: 'NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      { name: 'IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
      { name: 'HOST', valueFrom: { fieldRef: { fieldPath: 'status.hostIP' } } },
      { name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
      { name: 'APP', valueFrom: { fieldRef: { fieldPath: "metadata.labels['app']" } } },
    ],
  };
  const env = await makeEnvironment(c, ctx, src({ cm: { data: { k: 'v' } } }, { s: { data: { pw: Buffer.from('secret').toString('base64') } } }));
  assert.deepEqual(Object.fromEntries(env.map((e) => [e.key, e.value])), {
    CM_k: 'v', A: 'a', B: 'a-b', K: 'v', S: 'secret', NAME: 'p', IP: '10.244.0.5', HOST: '10.240.0.11', NODE: 'n1', APP: 'x',
  });
});

for (const tc of [
  { name: 'missing configmap', env: [{ name: 'X', valueFrom: { configMapKeyRef: { name: 'nope', key: 'k' } } }], want: 'configmap "nope" not found' },
  { name: 'missing key', env: [{ name: 'X', valueFrom: { configMapKeyRef: { name: 'cm', key: 'nokey' } } }], want: "couldn't find key nokey in ConfigMap ns/cm" },
  { name: 'missing secret', env: [{ name: 'X', valueFrom: { secretKeyRef: { name: 'nope', key: 'k' } } }], want: 'secret "nope" not found' },
]) {
  test(`CreateContainerConfigError: ${tc.name}`, async () => {
    await assert.rejects(makeEnvironment({ name: 'c', env: tc.env }, ctx, src({ cm: { data: { k: 'v' } } })), (e: unknown) => e instanceof ContainerConfigError && e.message === tc.want);
  });
}

test('optional references that are missing are skipped', async () => {
  const env = await makeEnvironment({ name: 'c', env: [{ name: 'X', valueFrom: { configMapKeyRef: { name: 'nope', key: 'k', optional: true } } }] }, ctx, src({}));
  assert.deepEqual(env, []);
});
