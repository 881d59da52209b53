/**
 * The runtime path: sandboxes through the real cri-docker shim (spec-style CNI invocation) with
 * mk8s-bridge chosen by 10-mk8s.conflist, and with Debian's reference bridge + host-local
 * conflist instead — the same shim code drives both, which keeps the invocation spec-true.
 * Needs root, dockerd, the mk8s images, /usr/lib/cni.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync, utimesSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PodSandboxConfig } from '@mk8s/proto';
import { ensureImages, startTestShim, waitFor, type TestShim } from '@mk8s/cri-docker/testing';
import { writeConflist, NETWORK_NAME } from '../src/conflist.js';
import { GC_MIN_AGE_MS } from '../src/bridge-plugin.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
let n = 0;
const config = (shim: TestShim): PodSandboxConfig => {
  n++;
  return { metadata: { name: `cni-${n}`, namespace: 'cni-int', uid: `uid-${shim.nodeName}-${n}`, attempt: 0 }, hostname: `cni-${n}`, labels: {} };
};
const reachable = (shim: TestShim, ip: string) => shim.inNetns(['busybox', 'ping', '-c1', '-W2', ip]).code === 0;

describe('sandboxes through the cri-docker shim', { timeout: 300_000 }, () => {
  before(() => {
    ensureImages();
    if (!existsSync(join(ROOT, 'cni/dist/plugin.js'))) assert.equal(spawnSync('npx', ['tsc', '-b', join(ROOT, 'cni')]).status, 0);
  });

  describe('with mk8s-bridge', () => {
    let shim: TestShim;
    let confDir: string;
    let dataDir: string;
    const allocated = () => { try { return readdirSync(join(dataDir, NETWORK_NAME)).filter((f) => /^\d/.test(f)); } catch { return []; } };
    before(async () => {
      confDir = mkdtempSync(join(tmpdir(), 'mk8s-cni-conf-'));
      dataDir = mkdtempSync(join(tmpdir(), 'mk8s-cni-data-'));
      shim = await startTestShim({ extraArgs: ['--cni-conf-dir', confDir, '--cni-bin-dir', `${join(ROOT, 'cni/bin')}:/usr/lib/cni`] });
      await writeConflist(confDir, { podCidr: shim.podCidr, dataDir });
    });
    after(async () => {
      await shim?.teardown();
      rmSync(confDir, { recursive: true, force: true });
      rmSync(dataDir, { recursive: true, force: true });
    });

    test('a sandbox gets its IP from mk8s-bridge, is reachable, and gives the IP back on removal', async () => {
      const id = await shim.runtime.runPodSandbox(config(shim));
      const ip = (await shim.runtime.podSandboxStatus(id)).network?.ip ?? '';
      assert.ok(ip.startsWith(shim.gateway.replace(/\.1$/, '.')), `${ip} in ${shim.podCidr}`);
      assert.deepEqual(allocated(), [ip], 'allocated by mk8s-bridge (its data dir), not host-local');
      assert.ok(reachable(shim, ip));
      await shim.runtime.stopPodSandbox(id);
      await shim.runtime.removePodSandbox(id);
      assert.deepEqual(allocated(), []);
    });

    test('an IP whose sandbox vanished without CNI DEL is collected by the next ADD', async () => {
      const id = await shim.runtime.runPodSandbox(config(shim));
      const ip = (await shim.runtime.podSandboxStatus(id)).network?.ip ?? '';
      // As if the shim died before the kubelet knew the sandbox and the container was then removed by hand.
      await shim.kill();
      await shim.docker.getContainer(id).remove({ force: true });
      await shim.start();
      assert.ok(allocated().includes(ip));
      // Only allocations older than GC_MIN_AGE_MS are collected (a concurrent ADD's is younger).
      const old = new Date(Date.now() - GC_MIN_AGE_MS - 1000);
      utimesSync(join(dataDir, NETWORK_NAME, ip), old, old);
      const next = await shim.runtime.runPodSandbox(config(shim));
      await waitFor(async () => !allocated().includes(ip), `${ip} to be collected`, 10_000);
      await shim.runtime.removePodSandbox(next);
      assert.deepEqual(allocated(), []);
    });
  });

  describe('with Debian\'s reference bridge + host-local plugins', () => {
    let shim: TestShim;
    before(async () => { shim = await startTestShim(); });   // writes 99-mk8s-bridge.conflist: type bridge, ipam host-local
    after(async () => { await shim?.teardown(); });

    test('a sandbox gets an IP from host-local and is reachable on cni0', async () => {
      const id = await shim.runtime.runPodSandbox(config(shim));
      const ip = (await shim.runtime.podSandboxStatus(id)).network?.ip ?? '';
      assert.ok(ip.startsWith(shim.gateway.replace(/\.1$/, '.')), `${ip} in ${shim.podCidr}`);
      assert.ok(reachable(shim, ip));
      await shim.runtime.removePodSandbox(id);
    });
  });
});
