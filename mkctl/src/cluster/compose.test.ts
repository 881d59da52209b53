import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { load } from 'js-yaml';
import { subjectOf } from '@mk8s/component-base/pki';
import { NODE_CREDENTIAL_FILES } from './cluster.js';
import { COMPOSE_TLS_MOUNT, composeAdminKubeconfig, composePki } from './compose.js';

interface Kc { clusters: { cluster: { server: string; 'certificate-authority-data': string } }[]; users: { name: string; user: { 'client-certificate-data': string } }[] }
const userCn = (kc: Kc) => subjectOf(Buffer.from(kc.users[0]!.user['client-certificate-data'], 'base64').toString()).commonName;

test('compose-pki: each service directory holds what its flags name, each identity its own certificate; reruns keep the CA and key', async () => {
  const state = mkdtempSync(join(tmpdir(), 'mk8s-compose-state-'));
  const dir = join(state, 'pki');
  try {
    await composePki({ dir, out: () => {} });
    // The apiserver: every file its flags name under the mount exists in its directory, and the flags are the secure ones.
    const flags = readFileSync(join(dir, 'apiserver', 'flags'), 'utf8').trim().split('\n');
    const value = (f: string) => flags[flags.indexOf(f) + 1];
    for (const f of flags.filter((x) => x.startsWith(`${COMPOSE_TLS_MOUNT}/`))) {
      assert.ok(existsSync(join(dir, 'apiserver', f.slice(COMPOSE_TLS_MOUNT.length + 1))), `${f} is in the apiserver's directory`);
    }
    assert.equal(value('--authorization-mode'), 'Node,RBAC');
    assert.equal(value('--client-ca-file'), `${COMPOSE_TLS_MOUNT}/ca.crt`);
    assert.equal(value('--etcd-servers'), 'https://10.250.0.11:2379,https://10.250.0.12:2379,https://10.250.0.13:2379');
    assert.equal(value('--advertise-address'), '10.250.0.10');
    for (const f of ['--encryption-provider-config', '--audit-policy-file', '--audit-log-path', '--service-account-key-file', '--kubelet-client-certificate']) assert.ok(flags.includes(f), f);
    assert.ok(!existsSync(join(dir, 'apiserver', 'ca.key')), 'the CA key: only in ca/ and for the CSR signer');
    assert.ok(existsSync(join(dir, 'controller-manager', 'ca.key')));
    for (const svc of ['etcd', 'scheduler', 'addons', 'compose-node-1']) assert.ok(!existsSync(join(dir, svc, 'ca.key')), svc);
    // Serving certificates carry the compose addresses.
    const sans = (f: string) => new X509Certificate(readFileSync(f)).subjectAltName ?? '';
    assert.match(sans(join(dir, 'apiserver', 'apiserver.crt')), /IP Address:10\.250\.0\.10/);
    assert.match(sans(join(dir, 'apiserver', 'apiserver.crt')), /IP Address:10\.96\.0\.1/);
    assert.match(sans(join(dir, 'etcd', 'server.crt')), /IP Address:10\.250\.0\.12/);
    assert.match(sans(join(dir, 'compose-node-2', NODE_CREDENTIAL_FILES.servingCert)), /IP Address:10\.250\.0\.32/);
    for (const f of Object.values(NODE_CREDENTIAL_FILES)) assert.ok(existsSync(join(dir, 'compose-node-1', f)), f);
    assert.equal(subjectOf(readFileSync(join(dir, 'compose-node-1', NODE_CREDENTIAL_FILES.cert), 'utf8')).commonName, 'system:node:compose-node-1');
    assert.equal(statSync(join(dir, 'compose-node-1', NODE_CREDENTIAL_FILES.key)).mode & 0o777, 0o600);
    // Components: their own identity, the in-network apiserver address.
    for (const [svc, cn] of [['controller-manager', 'system:kube-controller-manager'], ['scheduler', 'system:kube-scheduler'], ['addons', 'kubernetes-admin']] as const) {
      const kc = load(readFileSync(join(dir, svc, 'kubeconfig'), 'utf8')) as Kc;
      assert.equal(kc.clusters[0]!.cluster.server, 'https://10.250.0.10:6443');
      assert.equal(userCn(kc), cn);
    }
    // Idempotent: the CA and the encryption key survive a rerun (running components and stored Secrets depend on them).
    const ca = readFileSync(join(dir, 'ca', 'ca.crt'), 'utf8');
    const enc = readFileSync(join(dir, 'apiserver', 'encryption-config.yaml'), 'utf8');
    await composePki({ dir, out: () => {} });
    assert.equal(readFileSync(join(dir, 'ca', 'ca.crt'), 'utf8'), ca);
    assert.equal(readFileSync(join(dir, 'apiserver', 'encryption-config.yaml'), 'utf8'), enc);
    // The host's kubeconfig: the published loopback port, the admin's certificate, the CA.
    const admin = load(composeAdminKubeconfig({ stateDir: state, port: 16443 })) as Kc;
    assert.equal(admin.clusters[0]!.cluster.server, 'https://127.0.0.1:16443');
    assert.equal(Buffer.from(admin.clusters[0]!.cluster['certificate-authority-data'], 'base64').toString(), ca);
    assert.equal(userCn(admin), 'kubernetes-admin');
  } finally { rmSync(state, { recursive: true, force: true }); }
});

test('docker-compose.yml: every long-running service is restarted when it exits; one-shots are not', () => {
  const root = join(import.meta.dirname, '..', '..', '..');
  const doc = load(readFileSync(join(root, 'docker-compose.yml'), 'utf8')) as { services: Record<string, { restart?: string }> };
  // on-failure (x-common): a crash or kill -9 (exit != 0) restarts it with docker's back-off; a clean exit
  // only follows `docker-compose stop`, which must stop it for good. pki is one-shot.
  const oneShot: Record<string, string> = { pki: 'no' };
  const names = Object.keys(doc.services);
  assert.ok(names.includes('apiserver') && names.includes('compose-node-1'));
  for (const name of names) {
    assert.equal(doc.services[name]!.restart, oneShot[name] ?? 'on-failure', `${name}'s restart policy`);
  }
});
