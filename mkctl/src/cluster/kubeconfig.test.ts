import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseKubeConfig, restConfigFromKubeConfig } from '@mk8s/client';
import { renderKubeconfig } from './kubeconfig.js';
import { etcdArgs, etcdEndpoints, ETCD_MEMBERS } from './network-plan.js';

test('a component kubeconfig embeds the CA and its client certificate, as the client reads them', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mk8s-kc-'));
  try {
    for (const [f, text] of [['ca.crt', 'CA-PEM'], ['c.crt', 'CERT-PEM'], ['c.key', 'KEY-PEM']]) writeFileSync(join(dir, f!), text!);
    const text = renderKubeconfig({ server: 'https://10.240.0.1:6443', user: 'system:node:node-1', tls: { ca: join(dir, 'ca.crt'), cert: join(dir, 'c.crt'), key: join(dir, 'c.key') } });
    rmSync(dir, { recursive: true });
    // The files are gone: everything the connection needs is in the kubeconfig itself.
    assert.deepEqual(restConfigFromKubeConfig(parseKubeConfig(text)), {
      server: 'https://10.240.0.1:6443', namespace: 'default', ca: 'CA-PEM', cert: 'CERT-PEM', key: 'KEY-PEM',
    });
  } finally { rmSync(dir, { recursive: true, force: true }); }
});

test('etcd members speak TLS to clients and peers and require certificates of the etcd CA', () => {
  assert.ok(etcdEndpoints().every((e) => e.startsWith('https://127.0.0.1:')));
  const args = etcdArgs(ETCD_MEMBERS[0]!, '/d', 'new', { ca: 'ca', cert: 'c', key: 'k', peerCert: 'pc', peerKey: 'pk' });
  const flag = (f: string) => args[args.indexOf(f) + 1];
  assert.equal(flag('--listen-client-urls'), 'https://127.0.0.1:2379');
  assert.match(flag('--initial-cluster')!, /^etcd-1=https:\/\/127\.0\.0\.1:2380,etcd-2=https:/);
  for (const f of ['--client-cert-auth', '--peer-client-cert-auth']) assert.ok(args.includes(f), f);
  assert.equal(flag('--trusted-ca-file'), 'ca');
  assert.equal(flag('--peer-trusted-ca-file'), 'ca');
  assert.equal(flag('--peer-cert-file'), 'pc');
});
