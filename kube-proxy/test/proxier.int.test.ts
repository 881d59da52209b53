/**
 * The proxier against the real kernel: a throwaway node netns with two pods wired by mk8s-bridge,
 * each serving /hostname with busybox httpd; Services come from FakeInformers, rules go through
 * the real iptables-restore inside the node netns. Needs root, iptables, iproute2, busybox.
 * after() kills the servers and deletes the namespaces (their rules go with them).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { EndpointSlices, Services } from '@mk8s/api';
import { FakeInformer } from '@mk8s/client/testing';
import { realClock, silentLogger } from '@mk8s/component-base';
import { IprouteLinkOps, runCommand, runPlugin, type CommandRunner } from '@mk8s/cni';
import { Proxier, cleanupRules, type EndpointSliceObj, type ServiceObj } from '../src/proxier.js';
import { ExecIptablesRunner } from '../src/iptables.js';

const id = randomBytes(3).toString('hex');
const NODE = `mk8s-test-kp-${id}`;
const POD_CIDR = `10.252.${100 + (randomBytes(1)[0]! % 100)}.0/24`;
const GW = POD_CIDR.replace(/\.0\/24$/, '.1');
const CLUSTER_IP = '10.96.77.7';
const EMPTY_IP = '10.96.77.8';
const NODE_PORT = 30777;
const sh = (args: string[]) => { const r = spawnSync(args[0]!, args.slice(1), { encoding: 'utf8' }); return { code: r.status ?? 1, stdout: r.stdout ?? '', stderr: r.stderr ?? '' }; };
const inNs = (ns: string, args: string[]) => sh(['ip', 'netns', 'exec', ns, ...args]);
// 10 s: a loaded 2-core machine can starve a wget that should answer at once; the one check that
// expects no answer passes 3.
const get = (ns: string, url: string, timeoutS = 10) => inNs(ns, ['busybox', 'timeout', String(timeoutS), 'busybox', 'wget', '-qO-', url]);

describe('proxier on real iptables', { timeout: 300_000 }, () => {
  const pods: { ns: string; name: string; ip: string }[] = [];
  const servers: ChildProcess[] = [];
  let dir: string;
  const iptables = new ExecIptablesRunner({ prefix: ['ip', 'netns', 'exec', NODE] });
  const services = new FakeInformer<ServiceObj>(Services);
  const slices = new FakeInformer<EndpointSliceObj>(EndpointSlices);
  let proxier: Proxier;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mk8s-kp-int-'));
    assert.equal(sh(['ip', 'netns', 'add', NODE]).code, 0);
    inNs(NODE, ['ip', 'link', 'set', 'lo', 'up']);
    inNs(NODE, ['sysctl', '-qw', 'net.ipv4.ip_forward=1']);
    // Our CNI plugin wires the pods; its `ip` calls run in the node netns.
    const nodeRun: CommandRunner = (cmd, args, stdin) => runCommand('ip', ['netns', 'exec', NODE, cmd, ...args], stdin);
    for (const name of ['pod-a', 'pod-b']) {
      const ns = `mk8s-test-kp-${id}-${name}`;
      assert.equal(sh(['ip', 'netns', 'add', ns]).code, 0);
      const r = await runPlugin({
        env: { CNI_COMMAND: 'ADD', CNI_CONTAINERID: `${id}-${name}`, CNI_NETNS: `/var/run/netns/${ns}`, CNI_IFNAME: 'eth0' },
        stdin: JSON.stringify({ cniVersion: '1.0.0', name: 'kp', type: 'mk8s-bridge', podCIDR: POD_CIDR, dataDir: join(dir, 'ipam') }),
        links: new IprouteLinkOps(nodeRun),
      });
      assert.equal(r.code, 0, r.stdout);
      const ip = (JSON.parse(r.stdout) as { ips: { address: string }[] }).ips[0]!.address.split('/')[0]!;
      const www = join(dir, name);
      mkdirSync(www);
      writeFileSync(join(www, 'hostname'), name);
      servers.push(spawn('ip', ['netns', 'exec', ns, 'busybox', 'httpd', '-f', '-p', '8080', '-h', www], { stdio: 'ignore' }));
      pods.push({ ns, name, ip });
    }
    // A real node has a default route; without one, the node's own packets to a cluster IP fail
    // routing before the OUTPUT chain could DNAT them.
    assert.equal(inNs(NODE, ['ip', 'route', 'add', '10.96.0.0/12', 'dev', 'cni0']).code, 0);
    for (const p of pods) {
      for (let i = 0; get(NODE, `http://${p.ip}:8080/hostname`).stdout !== p.name; i++) {
        if (i > 100) throw new Error(`${p.name} does not serve`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    services.seed(
      { metadata: { name: 'web', namespace: 'default' }, spec: { type: 'NodePort', clusterIP: CLUSTER_IP, ports: [{ name: 'http', port: 80, protocol: 'TCP', nodePort: NODE_PORT }] } },
      { metadata: { name: 'empty', namespace: 'default' }, spec: { clusterIP: EMPTY_IP, ports: [{ port: 80, protocol: 'TCP' }] } },
    );
    slices.seed({
      metadata: { name: 'web-1', namespace: 'default', labels: { 'kubernetes.io/service-name': 'web' } }, addressType: 'IPv4',
      ports: [{ name: 'http', port: 8080, protocol: 'TCP' }], endpoints: pods.map((p) => ({ addresses: [p.ip], conditions: { ready: true } })),
    });
    proxier = new Proxier({ services, endpointSlices: slices, iptables, clusterCidr: POD_CIDR, minSyncPeriodMs: 100, syncPeriodMs: 60_000, clock: realClock, logger: silentLogger() });
    const first = proxier.nextSync();
    proxier.start();
    await first;
  });

  after(() => {
    proxier?.stop();
    iptables.close();
    for (const s of servers) s.kill('SIGKILL');
    for (const p of pods) sh(['ip', 'netns', 'del', p.ns]);
    sh(['ip', 'netns', 'del', NODE]);
    rmSync(dir, { recursive: true, force: true });
  });

  test('the ClusterIP balances over both pods, from the node and from a pod (hairpin included)', () => {
    for (const from of [NODE, pods[0]!.ns]) {
      const seen = new Set<string>();
      for (let i = 0; i < 30 && seen.size < 2; i++) seen.add(get(from, `http://${CLUSTER_IP}/hostname`).stdout);
      assert.deepEqual([...seen].sort(), ['pod-a', 'pod-b'], `from ${from}`);
    }
  });

  test('the NodePort answers on the node\'s own address', () => {
    assert.match(get(pods[1]!.ns, `http://${GW}:${NODE_PORT}/hostname`).stdout, /^pod-[ab]$/);
  });

  test('a Service without endpoints is refused, not dropped', () => {
    const r = inNs(NODE, ['busybox', 'timeout', '5', 'busybox', 'wget', '-qO-', `http://${EMPTY_IP}/`]);
    assert.match(r.stderr, /refused/i);
  });

  test('an endpoint turning unready stops getting traffic after the next sync', async () => {
    const synced = proxier.nextSync();
    slices.update({
      metadata: { name: 'web-1', namespace: 'default', labels: { 'kubernetes.io/service-name': 'web' } }, addressType: 'IPv4',
      ports: [{ name: 'http', port: 8080, protocol: 'TCP' }], endpoints: pods.map((p, i) => ({ addresses: [p.ip], conditions: { ready: i === 0 } })),
    });
    await synced;
    for (let i = 0; i < 10; i++) assert.equal(get(NODE, `http://${CLUSTER_IP}/hostname`).stdout, 'pod-a');
  });

  test('chainRules reads one chain back (what the periodic check uses); a missing chain is undefined', async () => {
    const masq = await iptables.chainRules('nat', 'KUBE-MARK-MASQ');
    assert.equal(masq?.[0], '-N KUBE-MARK-MASQ');
    assert.ok(masq?.some((l) => l.startsWith('-A KUBE-MARK-MASQ ') && l.includes('MARK')), masq?.join('\n'));
    assert.equal(await iptables.chainRules('nat', 'KUBE-NO-SUCH-CHAIN'), undefined);
  });

  test('flushed chains and jumps are repaired by the next full sync; cleanup removes everything', async () => {
    inNs(NODE, ['iptables', '-t', 'nat', '-F', 'KUBE-SERVICES']);
    inNs(NODE, ['iptables', '-t', 'nat', '-D', 'OUTPUT', '-m', 'comment', '--comment', 'kubernetes service portals', '-j', 'KUBE-SERVICES']);
    assert.notEqual(get(NODE, `http://${CLUSTER_IP}/hostname`, 3).stdout, 'pod-a');
    // Chains of a Service that went away while no kube-proxy ran: the full sync deletes them.
    inNs(NODE, ['iptables', '-t', 'nat', '-N', 'KUBE-SEP-STALESTALESTALE0']);
    inNs(NODE, ['iptables', '-t', 'nat', '-A', 'KUBE-SEP-STALESTALESTALE0', '-j', 'KUBE-MARK-MASQ']);
    inNs(NODE, ['iptables', '-t', 'nat', '-N', 'KUBE-SVC-STALESTALESTALE0']);
    inNs(NODE, ['iptables', '-t', 'nat', '-A', 'KUBE-SVC-STALESTALESTALE0', '-j', 'KUBE-SEP-STALESTALESTALE0']);
    // What the periodic resync (or a restart) does: a full sync.
    const fresh = new Proxier({ services, endpointSlices: slices, iptables, clusterCidr: POD_CIDR, minSyncPeriodMs: 100, syncPeriodMs: 60_000, clock: realClock, logger: silentLogger() });
    const r = await fresh.syncProxyRules();
    assert.ok(r.applied && r.full);
    assert.equal(get(NODE, `http://${CLUSTER_IP}/hostname`).stdout, 'pod-a');
    assert.ok(!inNs(NODE, ['iptables-save', '-t', 'nat']).stdout.includes('STALESTALE'), 'stale chains deleted');
    proxier.stop();
    await proxier.whenIdle();
    await cleanupRules(iptables);
    const left = inNs(NODE, ['iptables-save']).stdout.split('\n').filter((l) => l.includes('KUBE-'));
    assert.deepEqual(left, []);
  });
});
