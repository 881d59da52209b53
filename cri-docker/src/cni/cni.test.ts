import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CniNetwork, ipFromResult, OWN_CONFLIST, type CniExec } from './cni.js';

interface Call { plugin: string; env: Record<string, string>; stdin: Record<string, unknown> }

function setup(t: { after(fn: () => void): void }, reply: (c: Call) => { code: number; stdout: string }) {
  const dir = mkdtempSync(join(tmpdir(), 'mk8s-cni-unit-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  for (const p of ['bridge', 'portmap']) writeFileSync(join(bin, p), '');
  const calls: Call[] = [];
  const exec: CniExec = async (pluginPath, env, stdin) => {
    const c = { plugin: pluginPath.slice(bin.length + 1), env, stdin: JSON.parse(stdin) as Record<string, unknown> };
    calls.push(c);
    return { ...reply(c), stderr: '' };
  };
  const cni = new CniNetwork({ confDir: join(dir, 'net.d'), binDirs: [bin], ipamDataDir: join(dir, 'ipam'), exec });
  return { dir, cni, calls };
}

const pod = { namespace: 'default', name: 'web', uid: 'u1' };

test('ADD runs the list in order with prevResult and CNI_* env; DEL runs it backwards', async (t) => {
  const { dir, cni, calls } = setup(t, (c) => ({ code: 0, stdout: c.env['CNI_COMMAND'] === 'ADD' ? JSON.stringify({ cniVersion: '1.0.0', ips: [{ address: `10.244.1.${calls.length + 4}/24` }] }) : '' }));
  mkdirSync(join(dir, 'net.d'));
  writeFileSync(join(dir, 'net.d', '10-test.conflist'), JSON.stringify({ cniVersion: '1.0.0', name: 'testnet', plugins: [{ type: 'bridge', bridge: 'cni0' }, { type: 'portmap' }] }));
  const { ip } = await cni.add('abc', '/proc/42/ns/net', pod);
  assert.deepEqual(calls.map((c) => c.plugin), ['bridge', 'portmap']);
  assert.equal(ip, '10.244.1.6', 'the last plugin result wins');
  const [first, second] = calls;
  assert.equal(first?.stdin['name'], 'testnet');
  assert.equal(first?.stdin['cniVersion'], '1.0.0');
  assert.equal(first?.stdin['prevResult'], undefined);
  assert.deepEqual(second?.stdin['prevResult'], { cniVersion: '1.0.0', ips: [{ address: '10.244.1.5/24' }] });
  assert.equal(first?.env['CNI_COMMAND'], 'ADD');
  assert.equal(first?.env['CNI_CONTAINERID'], 'abc');
  assert.equal(first?.env['CNI_NETNS'], '/proc/42/ns/net');
  assert.equal(first?.env['CNI_IFNAME'], 'eth0');
  assert.match(first?.env['CNI_ARGS'] ?? '', /K8S_POD_NAMESPACE=default;K8S_POD_NAME=web;.*K8S_POD_UID=u1/);
  calls.length = 0;
  await cni.del('abc', '', pod);
  assert.deepEqual(calls.map((c) => `${c.env['CNI_COMMAND']} ${c.plugin}`), ['DEL portmap', 'DEL bridge']);
});

test('a failing plugin rejects with its error message', async (t) => {
  const { cni } = setup(t, () => ({ code: 1, stdout: JSON.stringify({ code: 11, msg: 'failed to allocate', details: 'range full' }) }));
  await cni.writeOwnConfig('10.244.3.0/24');
  await assert.rejects(cni.add('abc', '/proc/1/ns/net', pod), /CNI ADD with plugin bridge failed: failed to allocate: range full/);
});

test('without a config ADD is FailedPrecondition and DEL is a no-op', async (t) => {
  const { cni, calls } = setup(t, () => ({ code: 0, stdout: '{}' }));
  assert.equal(await cni.load(), undefined);
  await assert.rejects(cni.add('abc', '/proc/1/ns/net', pod), (e) => (e as { code?: string }).code === 'FailedPrecondition');
  await cni.del('abc', '', pod);
  assert.equal(calls.length, 0);
});

test('writeOwnConfig writes a bridge without masquerade, idempotently, and another config wins', async (t) => {
  const { dir, cni } = setup(t, () => ({ code: 0, stdout: '{}' }));
  assert.equal(await cni.writeOwnConfig('10.244.7.0/24'), true);
  assert.equal(await cni.writeOwnConfig('10.244.7.0/24'), false);
  const conf = JSON.parse(readFileSync(join(dir, 'net.d', OWN_CONFLIST), 'utf8')) as { plugins: Record<string, unknown>[] };
  assert.equal(conf.plugins[0]?.['ipMasq'], false);
  assert.deepEqual((conf.plugins[0]?.['ipam'] as { ranges: unknown }).ranges, [[{ subnet: '10.244.7.0/24' }]]);
  assert.equal((await cni.load())?.file, OWN_CONFLIST);
  writeFileSync(join(dir, 'net.d', '10-other.conf'), JSON.stringify({ cniVersion: '0.4.0', name: 'other', type: 'bridge' }));
  const other = await cni.load();
  assert.equal(other?.name, 'other');
  assert.deepEqual(other?.plugins.map((p) => p.type), ['bridge']);
});

test('ipFromResult reads 1.0 ips and 0.2 ip4 results', () => {
  assert.equal(ipFromResult({ ips: [{ address: 'fd00::5/64' }, { address: '10.1.2.3/24' }] }), '10.1.2.3');
  assert.equal(ipFromResult({ ip4: { ip: '10.9.9.9/16' } }), '10.9.9.9');
  assert.equal(ipFromResult(undefined), '');
});
