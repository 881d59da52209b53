import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Docker from 'dockerode';
import { silentLogger } from '@mk8s/component-base';
import { StatsReader, dirUsage } from './stats-reader.js';
import { cgroupMountPlan } from './cgroup-mount.js';
import { cgroupUsageFromFiles, detectCgroupLayout, parseProcCgroup } from './cgroups.js';

const MiB = 1024 * 1024;

/** A fake machine: a cgroup tree (v1 or v2), a /proc with each container's cgroup and net/dev, and a Docker that inspects. */
function fakeHost(t: { after(fn: () => void): void }, version: 1 | 2) {
  const dir = mkdtempSync(join(tmpdir(), 'mk8s-stats-unit-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const cg = join(dir, 'cgroup');
  const proc = join(dir, 'proc');
  const write = (p: string, s: string) => { mkdirSync(join(p, '..'), { recursive: true }); writeFileSync(p, s); };
  if (version === 2) write(join(cg, 'cgroup.controllers'), 'cpu memory pids\n');
  else { write(join(cg, 'cpuacct', 'cpuacct.usage'), '0\n'); write(join(cg, 'memory', 'memory.usage_in_bytes'), '0\n'); write(join(cg, 'pids', 'pids.current'), '1\n'); }
  const pids = new Map<string, number>();
  const uppers = new Map<string, string>();
  /** Sets a container's figures (cpu in ns, memory in bytes). */
  const set = (id: string, f: { cpuNs: number; usage: number; inactiveFile: number; rss: number; limit?: number; procs?: number }) => {
    if (!pids.has(id)) {
      const pid = 1000 + pids.size;
      pids.set(id, pid);
      const path = `/docker/${id}`;
      write(join(proc, String(pid), 'cgroup'), version === 2 ? `0::${path}\n` : `4:memory:${path}\n3:pids:${path}\n2:cpuacct:${path}\n1:cpu:${path}\n0::/\n`);
      const upper = join(dir, 'overlay', id, 'diff');
      mkdirSync(upper, { recursive: true });
      uppers.set(id, upper);
    }
    const path = `/docker/${id}`;
    if (version === 2) {
      const d = join(cg, path);
      write(join(d, 'cpu.stat'), `usage_usec ${f.cpuNs / 1000}\nuser_usec 1\nsystem_usec 1\n`);
      write(join(d, 'memory.current'), `${f.usage}\n`);
      write(join(d, 'memory.stat'), `anon ${f.rss}\nfile 5\ninactive_file ${f.inactiveFile}\npgfault 7\npgmajfault 1\n`);
      write(join(d, 'memory.max'), f.limit ? `${f.limit}\n` : 'max\n');
      write(join(d, 'pids.current'), `${f.procs ?? 1}\n`);
    } else {
      write(join(cg, 'cpuacct', path, 'cpuacct.usage'), `${f.cpuNs}\n`);
      write(join(cg, 'memory', path, 'memory.usage_in_bytes'), `${f.usage}\n`);
      write(join(cg, 'memory', path, 'memory.stat'), `cache 9\nrss 1\ninactive_file 3\ntotal_rss ${f.rss}\ntotal_inactive_file ${f.inactiveFile}\ntotal_pgfault 7\ntotal_pgmajfault 1\n`);
      write(join(cg, 'memory', path, 'memory.limit_in_bytes'), `${f.limit ?? 9223372036854771712}\n`);
      write(join(cg, 'pids', path, 'pids.current'), `${f.procs ?? 1}\n`);
    }
  };
  const netDev = (id: string, rx: number, tx: number) => write(join(proc, String(pids.get(id)), 'net', 'dev'),
    `Inter-|   Receive |  Transmit\n face |bytes packets errs drop fifo frame compressed multicast|bytes packets errs drop fifo colls carrier compressed\n    lo: 5 1 0 0 0 0 0 0 5 1 0 0 0 0 0 0\n  eth0: ${rx} 3 0 0 0 0 0 0 ${tx} 2 1 0 0 0 0 0\n`);
  let inspects = 0;
  const docker = {
    getContainer: (id: string) => ({
      inspect: async () => { inspects++; return { Id: id, State: { Pid: pids.get(id) ?? 0, Running: true }, GraphDriver: { Name: 'overlay2', Data: { UpperDir: uppers.get(id) } } }; },
    }),
  } as unknown as Docker;
  let nowMs = 1_700_000_000_000;
  const reader = new StatsReader({ logger: silentLogger(), cgroupRoot: cg, procRoot: proc, nowMs: () => nowMs, fsCacheMs: 10_000 });
  return { reader, docker, set, netDev, uppers, step: (ms: number) => { nowMs += ms; }, inspects: () => inspects, cg };
}

const labels = (name: string, type = 'container', sandbox = 's1') => ({
  'io.kubernetes.container.name': name, 'io.kubernetes.pod.name': 'p', 'io.kubernetes.pod.namespace': 'ns', 'io.kubernetes.pod.uid': 'u1',
  'io.kubernetes.docker.type': type, 'io.kubernetes.sandbox.id': sandbox, 'io.mk8s.node': 'n1',
});

for (const version of [1, 2] as const) {
  test(`cgroup v${version}: a container's CPU rate over a 15 s scrape, working set, RSS and limit`, async (t) => {
    const h = fakeHost(t, version);
    const c = { Id: 'c1', Labels: labels('app') };
    h.set('c1', { cpuNs: 5e9, usage: 80 * MiB, inactiveFile: 10 * MiB, rss: 66 * MiB, limit: 128 * MiB });
    const first = await h.reader.containerStats(h.docker, c);
    assert.equal(first?.cpu?.usageCoreNanoSeconds?.value, 5e9);
    assert.equal(first?.cpu?.usageNanoCores, undefined, 'no rate on a first sample');
    assert.equal(first?.memory?.workingSetBytes?.value, 70 * MiB);
    assert.equal(first?.memory?.rssBytes?.value, 66 * MiB);
    assert.equal(first?.memory?.availableBytes?.value, 58 * MiB);
    assert.equal(first?.memory?.pageFaults?.value, 7);
    assert.equal(first?.attributes.metadata.name, 'app');
    // One core for 15 s.
    h.step(15_000);
    h.set('c1', { cpuNs: 20e9, usage: 80 * MiB, inactiveFile: 10 * MiB, rss: 66 * MiB });
    const second = await h.reader.containerStats(h.docker, c);
    assert.equal(second?.cpu?.usageNanoCores?.value, 1e9);
    assert.equal(second?.memory?.availableBytes, undefined, 'unlimited: no available bytes');
    assert.equal(h.inspects(), 1, 'inspected once, then cached');
  });
}

test('a pod sums its containers and pause, keeps counting across a container restart, and reads its netns', async (t) => {
  const h = fakeHost(t, 1);
  const pause = { Id: 's1', Labels: labels('POD', 'podsandbox') };
  const a = { Id: 'a1', Labels: labels('a') };
  const b = { Id: 'b1', Labels: labels('b') };
  h.set('s1', { cpuNs: 1e6, usage: 1 * MiB, inactiveFile: 0, rss: 1 * MiB });
  h.set('a1', { cpuNs: 2e9, usage: 64 * MiB, inactiveFile: 0, rss: 64 * MiB, procs: 2 });
  h.set('b1', { cpuNs: 1e9, usage: 10 * MiB, inactiveFile: 2 * MiB, rss: 4 * MiB });
  h.netDev('s1', 1234, 567);
  const s = await h.reader.sandboxStats(h.docker, pause, [a, b]);
  assert.equal(s.attributes.metadata.name, 'p');
  assert.deepEqual(s.linux?.containers?.map((c) => c.attributes.metadata.name), ['a', 'b']);
  assert.equal(s.linux?.cpu?.usageCoreNanoSeconds?.value, 3e9 + 1e6);
  assert.equal(s.linux?.memory?.workingSetBytes?.value, 73 * MiB);
  assert.equal(s.linux?.process?.processCount?.value, 4);
  assert.deepEqual(s.linux?.network?.defaultInterface, { name: 'eth0', rxBytes: { value: 1234 }, rxErrors: { value: 0 }, txBytes: { value: 567 }, txErrors: { value: 1 } });
  // b is replaced by b2 (a restart: a new container from 0); a burns 1.5 cores for 10 s.
  h.step(10_000);
  h.set('a1', { cpuNs: 17e9, usage: 64 * MiB, inactiveFile: 0, rss: 64 * MiB });
  h.set('b2', { cpuNs: 0, usage: 1 * MiB, inactiveFile: 0, rss: 1 * MiB });
  const s2 = await h.reader.sandboxStats(h.docker, pause, [a, { Id: 'b2', Labels: labels('b') }]);
  assert.equal(s2.linux?.cpu?.usageCoreNanoSeconds?.value, 18e9 + 1e6, 'b1\'s 1 s stays in the pod total');
  assert.equal(s2.linux?.cpu?.usageNanoCores?.value, 1.5e9);
});

test('the writable layer is walked at most every fsCacheMs', async (t) => {
  const h = fakeHost(t, 2);
  const c = { Id: 'c1', Labels: labels('app') };
  h.set('c1', { cpuNs: 0, usage: 0, inactiveFile: 0, rss: 0 });
  writeFileSync(join(h.uppers.get('c1')!, 'f'), Buffer.alloc(64 * 1024, 1));
  const before = (await h.reader.containerStats(h.docker, c))?.writableLayer;
  assert.ok((before?.usedBytes?.value ?? 0) >= 64 * 1024 && before?.inodesUsed?.value === 1, JSON.stringify(before));
  writeFileSync(join(h.uppers.get('c1')!, 'g'), Buffer.alloc(64 * 1024, 1));
  h.step(1000);
  assert.equal((await h.reader.containerStats(h.docker, c))?.writableLayer?.inodesUsed?.value, 1, 'cached');
  h.step(10_000);
  assert.equal((await h.reader.containerStats(h.docker, c))?.writableLayer?.inodesUsed?.value, 2, 'walked again');
});

test('a container whose cgroup is gone yields no stats and is forgotten', async (t) => {
  const h = fakeHost(t, 1);
  assert.equal(await h.reader.containerStats(h.docker, { Id: 'nope', Labels: labels('x') }), undefined);
  h.set('c1', { cpuNs: 1, usage: 1, inactiveFile: 0, rss: 1 });
  rmSync(join(h.cg, 'cpuacct', 'docker', 'c1'), { recursive: true });
  assert.equal(await h.reader.containerStats(h.docker, { Id: 'c1', Labels: labels('x') }), undefined);
});

test('dirUsage counts allocated bytes and inodes, recursively', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'mk8s-du-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'a', 'b'), { recursive: true });
  writeFileSync(join(dir, 'a', 'b', 'f'), Buffer.alloc(8192, 1));
  const u = await dirUsage(dir);
  assert.equal(u.inodes, 3);
  assert.ok(u.bytes >= 8192);
});

test('parseProcCgroup and cgroupUsageFromFiles (v1 hierarchy names, v2 max, hybrid lines)', () => {
  const p = parseProcCgroup('12:cpu,cpuacct:/docker/x\n11:memory:/docker/x\n1:name=systemd:/docker/x\n0::/docker/x\n');
  assert.equal(p.v1.get('cpuacct'), '/docker/x');
  assert.equal(p.v1.get('cpu'), '/docker/x');
  assert.equal(p.unified, '/docker/x');
  const u = cgroupUsageFromFiles(2, { cpu: 'usage_usec 1500\n', memoryUsage: '100\n', memoryStat: 'inactive_file 150\nanon 30\n', memoryLimit: 'max\n', pids: undefined });
  assert.deepEqual([u.usageCoreNanoSeconds, u.workingSetBytes, u.rssBytes, u.memoryLimitBytes, u.processCount], [1_500_000, 0, 30, undefined, undefined]);
});

test('detectCgroupLayout rejects a tree with no cgroups (an ip netns exec sysfs)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'mk8s-cg-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  await assert.rejects(detectCgroupLayout(dir));
});

test('cgroupMountPlan rebuilds the v1 hierarchies the shim reads, or the v2 tree', () => {
  assert.deepEqual(cgroupMountPlan('0::/\n', '/sys/fs/cgroup'), [['mount', '-t', 'cgroup2', 'cgroup2', '/sys/fs/cgroup']]);
  assert.deepEqual(cgroupMountPlan('9:name=systemd:/\n4:memory:/x\n3:pids:/\n2:cpu,cpuacct:/\n1:blkio:/\n0::/\n', '/r'), [
    ['mount', '-t', 'tmpfs', '-o', 'mode=755', 'cgroup_root', '/r'],
    ['mkdir', '-p', '/r/cpu,cpuacct'], ['mount', '-t', 'cgroup', '-o', 'cpu,cpuacct', 'cgroup', '/r/cpu,cpuacct'], ['ln', '-sfn', 'cpu,cpuacct', '/r/cpuacct'],
    ['mkdir', '-p', '/r/memory'], ['mount', '-t', 'cgroup', '-o', 'memory', 'cgroup', '/r/memory'],
    ['mkdir', '-p', '/r/pids'], ['mount', '-t', 'cgroup', '-o', 'pids', 'cgroup', '/r/pids'],
  ]);
});
