import { test } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '@mk8s/component-base';
import type { FastifyInstance } from 'fastify';
import { MemoryStorage } from '../testing/memory-storage.js';
import { buildApiServer } from '../server.js';
import type { Registry } from '../registry/index.js';
import { extensionApiserverAuthenticationData, reconcileExtensionApiserverAuthentication, type RequestHeaderConfig } from './extension-apiserver-authentication.js';

const RH: RequestHeaderConfig = {
  clientCA: 'FRONT-PROXY-CA-PEM', allowedNames: ['front-proxy-client'], usernameHeaders: ['X-Remote-User'],
  groupHeaders: ['X-Remote-Group'], extraHeadersPrefixes: ['X-Remote-Extra-'],
};

test('extension-apiserver-authentication data: upstream keys, list values as JSON arrays', () => {
  const cases: { name: string; in: Parameters<typeof extensionApiserverAuthenticationData>[0]; want: Record<string, string> }[] = [
    { name: 'nothing configured', in: {}, want: {} },
    { name: 'client CA only', in: { clientCA: 'CA-PEM' }, want: { 'client-ca-file': 'CA-PEM' } },
    {
      name: 'client CA and requestheader (kubeadm flags)', in: { clientCA: 'CA-PEM', requestHeader: RH }, want: {
        'client-ca-file': 'CA-PEM',
        'requestheader-client-ca-file': 'FRONT-PROXY-CA-PEM',
        'requestheader-allowed-names': '["front-proxy-client"]',
        'requestheader-username-headers': '["X-Remote-User"]',
        'requestheader-group-headers': '["X-Remote-Group"]',
        'requestheader-extra-headers-prefix': '["X-Remote-Extra-"]',
      },
    },
    {
      name: 'empty allowed names (any CN of the CA) stays an empty array', in: { requestHeader: { ...RH, allowedNames: [] } }, want: {
        'requestheader-client-ca-file': 'FRONT-PROXY-CA-PEM', 'requestheader-allowed-names': '[]',
        'requestheader-username-headers': '["X-Remote-User"]', 'requestheader-group-headers': '["X-Remote-Group"]',
        'requestheader-extra-headers-prefix': '["X-Remote-Extra-"]',
      },
    },
  ];
  for (const c of cases) assert.deepEqual(extensionApiserverAuthenticationData(c.in), c.want, c.name);
});

test('reconcileExtensionApiserverAuthentication creates the ConfigMap, then replaces its data', async (t) => {
  const app = await buildApiServer({ storage: new MemoryStorage(), logger: silentLogger() });
  await app.ready();
  t.after(() => app.close());
  const registry = (app as FastifyInstance & { registry: Registry }).registry;
  const url = '/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication';
  await reconcileExtensionApiserverAuthentication(registry, extensionApiserverAuthenticationData({ clientCA: 'OLD' }));
  assert.deepEqual((await app.inject({ url })).json().data, { 'client-ca-file': 'OLD' });
  const want = extensionApiserverAuthenticationData({ clientCA: 'NEW', requestHeader: RH });
  await reconcileExtensionApiserverAuthentication(registry, want);
  await reconcileExtensionApiserverAuthentication(registry, want);
  assert.deepEqual((await app.inject({ url })).json().data, want);
});
