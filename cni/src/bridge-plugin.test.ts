import { test, describe, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GC_MIN_AGE_MS, runPlugin } from './bridge-plugin.js';
import { hostVethName } from './link-ops.js';
import { FakeLinkOps } from './testing/fake-link-ops.js';

let dataDir: string;
let links: FakeLinkOps;
beforeEach(() => { dataDir = mkdtempSync(join(tmpdir(), 'mk8s-cni-unit-')); links = new FakeLinkOps(); });
afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

const conf = (extra: Record<string, unknown> = {}) => JSON.stringify({ cniVersion: '1.0.0', name: 'net', type: 'mk8s-bridge', podCIDR: '10.244.1.0/24', dataDir, ...extra });
const env = (command: string, id = 'c1', netns = '/proc/1/ns/net') => ({ CNI_COMMAND: command, CNI_CONTAINERID: id, CNI_NETNS: netns, CNI_IFNAME: 'eth0', CNI_PATH: '/opt/cni/bin' });
const call = async (command: string, id?: string, stdin = conf(), netns?: string) => {
  const r = await runPlugin({ env: env(command, id, netns), stdin, links });
  return { code: r.code, out: r.stdout ? JSON.parse(r.stdout) as Record<string, any> : undefined };
};
const allocated = () => readdirSync(join(dataDir, 'net')).filter((f) => /^\d+\.\d+\.\d+\.\d+$/.test(f)).sort();

describe('mk8s-bridge', () => {
  test('VERSION lists the supported spec versions', async () => {
    const r = await runPlugin({ env: { CNI_COMMAND: 'VERSION' }, stdin: '{"cniVersion":"1.0.0"}', links });
    assert.equal(r.code, 0);
    assert.deepEqual(JSON.parse(r.stdout), { cniVersion: '1.0.0', supportedVersions: ['0.3.0', '0.3.1', '0.4.0', '1.0.0'] });
  });

  test('ADD returns a 1.0.0 result with the first pod IP, the gateway and three interfaces', async () => {
    const { code, out } = await call('ADD');
    assert.equal(code, 0);
    assert.equal(out!['cniVersion'], '1.0.0');
    assert.deepEqual(out!['ips'], [{ address: '10.244.1.2/24', gateway: '10.244.1.1', interface: 2 }]);
    assert.deepEqual(out!['routes'], [{ dst: '0.0.0.0/0', gw: '10.244.1.1' }]);
    assert.deepEqual(out!['interfaces'].map((i: { name: string }) => i.name), ['cni0', hostVethName('c1', 'eth0'), 'eth0']);
    assert.equal(out!['interfaces'][2].sandbox, '/proc/1/ns/net');
    assert.ok(links.calls.includes('ensureBridge cni0 10.244.1.1/24'));
  });

  test('an older cniVersion gets ips with version "4"', async () => {
    const { out } = await call('ADD', 'c1', conf({ cniVersion: '0.4.0' }));
    assert.equal(out!['ips'][0].version, '4');
    assert.equal(out!['cniVersion'], '0.4.0');
  });

  test('pods get distinct IPs and a repeated ADD keeps the same one', async () => {
    const a = await call('ADD', 'c1');
    const b = await call('ADD', 'c2');
    const again = await call('ADD', 'c1');
    assert.equal(a.out!['ips'][0].address, '10.244.1.2/24');
    assert.equal(b.out!['ips'][0].address, '10.244.1.3/24');
    assert.equal(again.out!['ips'][0].address, '10.244.1.2/24');
    assert.deepEqual(allocated(), ['10.244.1.2', '10.244.1.3']);
  });

  test('DEL releases the IP and the veth and is idempotent, also without a netns', async () => {
    await call('ADD', 'c1');
    assert.equal((await call('DEL', 'c1')).code, 0);
    assert.deepEqual(allocated(), []);
    assert.equal(links.links.has(hostVethName('c1', 'eth0')), false);
    assert.equal((await call('DEL', 'c1', conf(), '')).code, 0);
    assert.equal((await call('DEL', 'never-added')).code, 0);
  });

  test('a released IP is not handed out again at once (round robin)', async () => {
    await call('ADD', 'c1');
    await call('DEL', 'c1');
    const { out } = await call('ADD', 'c2');
    assert.equal(out!['ips'][0].address, '10.244.1.3/24');
  });

  test('ADD frees allocations whose pod netns died (no veth) without touching live ones', async () => {
    await call('ADD', 'live');
    await call('ADD', 'dead');
    links.links.delete(hostVethName('dead', 'eth0'));   // the kernel removes the pair with the netns
    await call('ADD', 'young');
    // Young allocations are kept: a concurrent ADD creates its veth after allocating.
    assert.deepEqual(allocated(), ['10.244.1.2', '10.244.1.3', '10.244.1.4']);
    const old = new Date(Date.now() - GC_MIN_AGE_MS - 1000);
    utimesSync(join(dataDir, 'net', '10.244.1.3'), old, old);
    await call('ADD', 'new');
    assert.deepEqual(allocated(), ['10.244.1.2', '10.244.1.4', '10.244.1.5']);
  });

  test('a failed ADD leaves no allocation and no veth, and a missing netns is error 3', async () => {
    links.existingNetns = new Set(['/proc/1/ns/net']);
    const r = await call('ADD', 'c1', conf(), '/proc/999999/ns/net');
    assert.equal(r.code, 1);
    assert.equal(r.out!['code'], 3);
    assert.deepEqual(allocated(), []);
    assert.equal(links.links.has(hostVethName('c1', 'eth0')), false);
  });

  test('a full range answers error 100 and the error JSON of the spec', async () => {
    const small = conf({ podCIDR: '10.244.1.0/30' });
    assert.equal((await call('ADD', 'c1', small)).code, 0);
    const r = await call('ADD', 'c2', small);
    assert.equal(r.code, 1);
    assert.equal(r.out!['code'], 100);
    assert.equal(r.out!['cniVersion'], '1.0.0');
    assert.match(r.out!['msg'], /no IP addresses available/);
  });

  const errors: { name: string; env: Record<string, string>; stdin: string; code: number }[] = [
    { name: 'unknown command', env: { CNI_COMMAND: 'FOO' }, stdin: '{}', code: 4 },
    { name: 'ADD without CNI_NETNS', env: { CNI_COMMAND: 'ADD', CNI_CONTAINERID: 'c', CNI_IFNAME: 'eth0' }, stdin: '{}', code: 4 },
    { name: 'config that is not JSON', env: { CNI_COMMAND: 'ADD', CNI_CONTAINERID: 'c', CNI_NETNS: '/x', CNI_IFNAME: 'eth0' }, stdin: '{', code: 6 },
    { name: 'unsupported cniVersion', env: { CNI_COMMAND: 'ADD', CNI_CONTAINERID: 'c', CNI_NETNS: '/x', CNI_IFNAME: 'eth0' }, stdin: '{"cniVersion":"9.9.9","name":"n","podCIDR":"10.0.0.0/24","dataDir":"/tmp/x"}', code: 1 },
    { name: 'config without podCIDR', env: { CNI_COMMAND: 'ADD', CNI_CONTAINERID: 'c', CNI_NETNS: '/x', CNI_IFNAME: 'eth0' }, stdin: '{"cniVersion":"1.0.0","name":"n","dataDir":"/tmp/x"}', code: 7 },
  ];
  for (const tc of errors) {
    test(`rejects ${tc.name} with error code ${tc.code}`, async () => {
      const r = await runPlugin({ env: tc.env, stdin: tc.stdin, links });
      assert.equal(r.code, 1);
      assert.equal(JSON.parse(r.stdout).code, tc.code);
    });
  }

  test('CHECK passes after ADD and fails once the veth is gone', async () => {
    const add = await call('ADD', 'c1');
    const withPrev = conf({ prevResult: add.out });
    assert.equal((await call('CHECK', 'c1', withPrev)).code, 0);
    links.links.delete(hostVethName('c1', 'eth0'));
    const r = await call('CHECK', 'c1', withPrev);
    assert.equal(r.code, 1);
    assert.equal(r.out!['code'], 101);
  });

  test('GC frees every attachment not listed as valid', async () => {
    await call('ADD', 'keep');
    await call('ADD', 'drop');
    const r = await call('GC', '', conf({ 'cni.dev/valid-attachments': [{ containerID: 'keep', ifname: 'eth0' }] }));
    assert.equal(r.code, 0);
    assert.deepEqual(allocated(), ['10.244.1.2']);
  });

  test('1,000 ADD/DEL cycles leak no IP and no veth', async () => {
    for (let i = 0; i < 1000; i++) {
      assert.equal((await call('ADD', `c${i}`)).code, 0);
      assert.equal((await call('DEL', `c${i}`)).code, 0);
    }
    assert.deepEqual(allocated(), []);
    assert.deepEqual([...links.links.keys()], ['cni0']);
  });
});
