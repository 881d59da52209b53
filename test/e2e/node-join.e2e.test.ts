/**
 * `mkctl node join` on a second "machine": a network namespace (mk8s-join-1, 10.240.0.50 on the
 * local cluster's bridge mk8s0) that runs only the node components, started by `mkctl node join
 * --server https://10.240.0.1:6443 --credentials <dir>` inside it (the directory made by `mkctl
 * cluster credentials`: the node's own certificates). The Node registers over the node network and becomes
 * Ready, a pod pinned to it (spec.nodeName) runs and answers on its pod IP, then `mkctl node leave
 * --delete-node` stops it all. Needs the local cluster (`mkctl cluster up`); the namespace, veth,
 * state dir, Node, pod and pod containers are removed even when a step fails.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, kubectl, kubectlOk } from './lib/cluster.js';

const NETNS = 'mk8s-join-1';
const HOST_VETH = 'mk8s-j1';
const NODE = 'join-1';
const NODE_IP = '10.240.0.50';
const SERVER = 'https://10.240.0.1:6443';
const CA = join(ROOT, '.mk8s', 'pki', 'ca.crt');
const TIMEOUT_MS = 600_000;

function sh(cmd: string, args: string[], timeoutMs = 120_000) {
  const r = spawnSync(cmd, args, { cwd: ROOT, encoding: 'utf8', timeout: timeoutMs });
  return { code: r.status ?? -1, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}
function must(cmd: string, args: string[]): string {
  const r = sh(cmd, args);
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.stderr || r.stdout}`);
  return r.stdout;
}

/** mkctl (the built binary, else the sources through tsx), on the host or inside the joined "machine". */
function mkctlCmd(): string[] {
  const dist = join(ROOT, 'mkctl', 'dist', 'main.js');
  return existsSync(dist) ? [process.execPath, dist] : [process.execPath, '--conditions=@mk8s/source', '--import', 'tsx', join(ROOT, 'mkctl', 'src', 'main.ts')];
}
function mkctlInNetns(args: string[], timeoutMs: number) {
  return sh('ip', ['netns', 'exec', NETNS, ...mkctlCmd(), ...args], timeoutMs);
}

async function waitFor<T>(what: string, fn: () => T | undefined, timeoutMs: number, detail: () => string = () => ''): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${detail()}`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

const apiserverUp = sh('curl', ['-sf', '-m', '5', '--cacert', CA, `${SERVER}/readyz`]).code === 0;

describe('mkctl node join (a netns as a second machine)', { skip: apiserverUp ? false : `no apiserver at ${SERVER} (mkctl cluster up)` }, () => {
  const stateDir = join(mkdtempSync(join(tmpdir(), 'mk8s-join-')), NODE);
  const credentials = join(stateDir, '..', 'credentials');
  const logs = () => ['cri-docker', 'kubelet', 'kube-proxy'].map((c) => `--- ${c}\n${sh('tail', ['-n', '15', join(stateDir, 'logs', `${c}.log`)]).stdout}`).join('\n');

  before(() => {
    // The "machine": its own netns with one NIC on the node network, like ensureNodeNetwork wires a local node.
    sh('ip', ['netns', 'del', NETNS]);
    sh('ip', ['link', 'del', HOST_VETH]);
    must('ip', ['netns', 'add', NETNS]);
    must('ip', ['link', 'add', HOST_VETH, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', NETNS]);
    must('ip', ['link', 'set', HOST_VETH, 'master', 'mk8s0']);
    must('ip', ['link', 'set', HOST_VETH, 'up']);
    must('ip', ['-n', NETNS, 'addr', 'add', `${NODE_IP}/24`, 'dev', 'eth0']);
    must('ip', ['-n', NETNS, 'link', 'set', 'eth0', 'up']);
    must('ip', ['-n', NETNS, 'link', 'set', 'lo', 'up']);
    must('ip', ['netns', 'exec', NETNS, 'sysctl', '-qw', 'net.ipv4.ip_forward=1']);
    // The node's certificates, issued by the cluster CA on the control plane's side.
    const [bin, ...pre] = mkctlCmd();
    must(bin!, [...pre, 'cluster', 'credentials', '--node-name', NODE, '--node-ip', NODE_IP, '--out', credentials]);
  });

  after(() => {
    mkctlInNetns(['node', 'leave', '--node-name', NODE, '--state-dir', stateDir], 120_000);
    kubectl(['delete', 'pod', 'join-pinned', '--force', '--grace-period=0', '--ignore-not-found']);
    kubectl(['delete', 'node', NODE, '--ignore-not-found']);
    const ids = sh('docker', ['ps', '-aq', '--filter', `label=io.mk8s.node=${NODE}`]).stdout.split('\n').filter(Boolean);
    if (ids.length) sh('docker', ['rm', '-f', ...ids]);
    sh('ip', ['netns', 'del', NETNS]);
    sh('ip', ['link', 'del', HOST_VETH]);
    rmSync(join(stateDir, '..'), { recursive: true, force: true });
  });

  test('joins over the node network and the Node becomes Ready', { timeout: TIMEOUT_MS + 60_000 }, async () => {
    const r = mkctlInNetns(['node', 'join', '--server', SERVER, '--credentials', credentials, '--node-name', NODE, '--node-ip', NODE_IP,
      '--state-dir', stateDir, '--timeout', String(TIMEOUT_MS / 1000)], TIMEOUT_MS + 30_000);
    assert.equal(r.code, 0, `node join failed:\n${r.stdout}\n${r.stderr}\n${logs()}`);
    for (const c of ['cri-docker', 'kubelet', 'kube-proxy']) assert.ok(existsSync(join(stateDir, 'run', `${c}.pid`)), `${c} pid file`);
    await waitFor(`Node ${NODE} Ready`, () => {
      // Cordoned as soon as it exists: other tests' workloads on the shared cluster must not land on a
      // node this test is about to remove (the pinned pod bypasses the scheduler).
      kubectl(['cordon', NODE]);
      const s = kubectl(['get', 'node', NODE, '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status} {.status.addresses[?(@.type=="InternalIP")].address}']);
      return s.code === 0 && s.stdout.startsWith('True ') ? s.stdout : undefined;
    }, TIMEOUT_MS, logs).then((s) => assert.equal(s.split(' ')[1], NODE_IP));
  });

  test('runs a pod pinned to the joined node', { timeout: TIMEOUT_MS + 60_000 }, async () => {
    kubectlOk(['apply', '-f', '-'], { input: `apiVersion: v1
kind: Pod
metadata: {name: join-pinned, namespace: default}
spec:
  nodeName: ${NODE}
  terminationGracePeriodSeconds: 2
  containers:
  - {name: web, image: "mk8s/testserver:1.0", imagePullPolicy: IfNotPresent}
` });
    const ip = await waitFor('pod join-pinned Running', () => {
      const s = kubectl(['get', 'pod', 'join-pinned', '-o', 'jsonpath={.status.phase} {.status.podIP}']);
      return s.stdout.startsWith('Running ') ? s.stdout.split(' ')[1] : undefined;
    }, TIMEOUT_MS, () => `${kubectl(['describe', 'pod', 'join-pinned']).stdout}\n${logs()}`);
    const ids = sh('docker', ['ps', '-q', '--filter', `label=io.mk8s.node=${NODE}`, '--filter', 'label=io.kubernetes.pod.name=join-pinned']).stdout.split('\n').filter(Boolean);
    assert.ok(ids.length >= 2, 'pause and web containers carry io.mk8s.node=join-1');
    // Reachable on its pod IP from its own node (cni0 in the joined namespace).
    const hit = await waitFor('the pod answering on its IP', () => {
      const h = sh('ip', ['netns', 'exec', NETNS, 'curl', '-sf', '-m', '5', `http://${ip}:8080/hostname`]);
      return h.code === 0 ? h.stdout : undefined;
    }, 60_000);
    assert.ok(hit.trim().length > 0, 'the test server answered /hostname');
  });

  test('node leave stops the components, removes its pod containers and the Node', { timeout: 180_000 }, async () => {
    const r = mkctlInNetns(['node', 'leave', '--node-name', NODE, '--state-dir', stateDir, '--delete-node'], 150_000);
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    assert.equal(sh('docker', ['ps', '-aq', '--filter', `label=io.mk8s.node=${NODE}`]).stdout.trim(), '');
    assert.equal(existsSync(stateDir), false);
    assert.match(kubectl(['get', 'node', NODE]).stderr, /NotFound/);
    assert.equal(sh('ip', ['-n', NETNS, 'link', 'show', 'cni0']).code === 0, false, 'cni0 removed');
  });
});
