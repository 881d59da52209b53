import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Docker from 'dockerode';
import { silentLogger } from '@mk8s/component-base';
import { CniNetwork } from './cni/cni.js';
import type { ShimContext } from './context.js';
import { StatsReader } from './stats-reader.js';
import { status, updateRuntimeConfig } from './runtime-status.js';
import { criContainerState, exitReason } from './container-status.js';
import { bindSpec } from './container-create.js';

function ctx(t: { after(fn: () => void): void }, pingOk = true): ShimContext {
  const dir = mkdtempSync(join(tmpdir(), 'mk8s-status-unit-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const docker = { ping: async () => { if (!pingOk) throw new Error('connect ENOENT /var/run/docker.sock'); return 'OK'; } } as unknown as Docker;
  return {
    docker, nodeName: 'n1', pauseImage: 'mk8s/pause:3.9', networkPlugin: 'cni', ips: new Map(), sandboxes: new Map(), created: new Set(), startFailed: new Set(), logger: silentLogger(), stats: new StatsReader({ logger: silentLogger() }),
    cni: new CniNetwork({ confDir: join(dir, 'net.d'), binDirs: [], ipamDataDir: join(dir, 'ipam') }),
    run: async () => ({ code: 1, stdout: '' }),
  };
}

test('NetworkReady turns true once the kubelet passes the pod CIDR', async (t) => {
  const c = ctx(t);
  const before = await status(c);
  assert.deepEqual(before.conditions.map((x) => [x.type, x.status, x.reason]), [['RuntimeReady', true, ''], ['NetworkReady', false, 'NetworkPluginNotReady']]);
  await updateRuntimeConfig(c, { networkConfig: { podCidr: '10.244.2.0/24' } });
  const after = await status(c);
  assert.equal(after.conditions.find((x) => x.type === 'NetworkReady')?.status, true);
});

test('RuntimeReady is false while Docker does not answer', async (t) => {
  const s = await status(ctx(t, false));
  const rr = s.conditions.find((x) => x.type === 'RuntimeReady');
  assert.equal(rr?.status, false);
  assert.equal(rr?.reason, 'DockerDaemonNotReady');
});

test('exit reasons follow the kubelet: OOMKilled, Completed, Error', () => {
  assert.equal(exitReason(true, 137), 'OOMKilled');
  assert.equal(exitReason(false, 0), 'Completed');
  assert.equal(exitReason(false, 2), 'Error');
});

test('a container whose start failed is exited with StartError and exit code 128 (as containerd)', () => {
  const failed = criContainerState({ Status: 'created', ExitCode: 127, Error: 'exec: "/no/such/binary": stat /no/such/binary: no such file or directory' });
  assert.deepEqual(failed, { state: 'CONTAINER_EXITED', startFailed: true, exitCode: 128, reason: 'StartError' });
  assert.deepEqual(criContainerState({ Status: 'created', ExitCode: 0, Error: '' }), { state: 'CONTAINER_CREATED', startFailed: false, exitCode: 0, reason: '' });
  assert.deepEqual(criContainerState({ Status: 'exited', ExitCode: 137, OOMKilled: true }), { state: 'CONTAINER_EXITED', startFailed: false, exitCode: 137, reason: 'OOMKilled' });
});

test('mounts become Docker binds with mode and propagation', () => {
  assert.equal(bindSpec({ hostPath: '/h', containerPath: '/c' }), '/h:/c:rw');
  assert.equal(bindSpec({ hostPath: '/h', containerPath: '/c', readonly: true, propagation: 'PROPAGATION_HOST_TO_CONTAINER' }), '/h:/c:ro,rslave');
});
