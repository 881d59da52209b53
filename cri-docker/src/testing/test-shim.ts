/**
 * startTestShim runs the real shim binary, as a cluster does, inside a fresh network namespace
 * (`mk8s-test-cri-<random>`) with its own CNI config for a private pod CIDR, and connects
 * RemoteRuntimeService/RemoteImageService to its socket. For integration tests of the shim and
 * of the kubelet. `teardown()` removes every container labelled with its node name, the netns
 * and the temp dir, even after failures; call it from `after()`.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import Docker from 'dockerode';
import { RemoteImageService, RemoteRuntimeService } from '@mk8s/proto';
import { NODE_LABEL } from '../labels.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export interface TestShimOptions {
  /** @default 'cni' */
  networkPlugin?: 'cni' | 'none';
  /** Extra CLI flags for the shim. */
  extraArgs?: string[];
  /** @default a random 10.250.x.0/24 */
  podCidr?: string;
  /** @default test-cri-<random> */
  nodeName?: string;
}

export interface TestShim {
  nodeName: string;
  netns: string;
  socketPath: string;
  podCidr: string;
  /** The bridge gateway (first address of podCidr). */
  gateway: string;
  runtime: RemoteRuntimeService;
  images: RemoteImageService;
  docker: Docker;
  /** Kills the shim process (SIGKILL: as a crash) and waits for it to exit. */
  kill(): Promise<void>;
  /** Starts the shim process again (after kill) and waits until it answers. */
  start(): Promise<void>;
  /** Runs a command inside the test netns. */
  inNetns(cmd: string[]): { code: number; stdout: string; stderr: string };
  teardown(): Promise<void>;
  /** The shim's log so far (stdout and stderr). */
  log(): string;
}

/** Builds the offline images if missing (fast when present). */
export function ensureImages(): void {
  const r = spawnSync('bash', [join(ROOT, 'images/build.sh')], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`images/build.sh failed: ${r.stderr}`);
}

export async function waitFor<T>(fn: () => Promise<T | undefined | false>, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (let delay = 20; ; delay = Math.min(delay * 2, 500)) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false) return v;
    } catch (err) { last = err; }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, delay));
  }
}

export async function startTestShim(o: TestShimOptions = {}): Promise<TestShim> {
  const id = randomBytes(3).toString('hex');
  const nodeName = o.nodeName ?? `test-cri-${id}`;
  const netns = `mk8s-test-cri-${id}`;
  const dir = mkdtempSync(join(tmpdir(), 'mk8s-cri-test-'));
  const socketPath = join(dir, 'cri.sock');
  const octet = 100 + (randomBytes(1)[0]! % 150);
  const podCidr = o.podCidr ?? `10.250.${octet}.0/24`;
  const docker = new Docker();
  let logText = '';
  let child: ChildProcess | undefined;

  const ip = (...args: string[]) => spawnSync('ip', args, { encoding: 'utf8' });
  const add = ip('netns', 'add', netns);
  if (add.status !== 0) throw new Error(`ip netns add ${netns}: ${add.stderr}`);
  ip('-n', netns, 'link', 'set', 'lo', 'up');

  const runtime = new RemoteRuntimeService({ socketPath, timeoutMs: 60_000 });
  const images = new RemoteImageService({ socketPath, timeoutMs: 60_000 });

  const start = async () => {
    const args = [
      'netns', 'exec', netns, process.execPath, '--conditions=@mk8s/source', '--import', 'tsx', join(ROOT, 'cri-docker/src/main.ts'),
      '--socket', socketPath, '--node-name', nodeName, '--network-plugin', o.networkPlugin ?? 'cni',
      '--cni-conf-dir', join(dir, 'net.d'), '--cni-bin-dir', '/usr/lib/cni', '--cni-data-dir', join(dir, 'ipam'),
      '--pod-cidr', podCidr, '--log-level', 'debug', ...(o.extraArgs ?? []),
    ];
    rmSync(socketPath, { force: true });
    const p = spawn('ip', args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    child = p;
    p.stdout?.on('data', (b: Buffer) => { logText += b.toString(); });
    p.stderr?.on('data', (b: Buffer) => { logText += b.toString(); });
    await waitFor(async () => {
      if (p.exitCode !== null) throw new Error(`shim exited with ${p.exitCode}: ${logText}`);
      return existsSync(socketPath) && (await runtime.version());
    }, 'the shim to serve', 60_000);
  };

  const kill = async () => {
    const p = child;
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    const exited = new Promise<void>((r) => p.once('exit', () => r()));
    p.kill('SIGKILL');
    await exited;
  };

  const teardown = async () => {
    await kill();
    runtime.close();
    images.close();
    const leftovers = await docker.listContainers({ all: true, filters: { label: [`${NODE_LABEL}=${nodeName}`] } }).catch(() => []);
    await Promise.all(leftovers.map((c) => docker.getContainer(c.Id).remove({ force: true, v: true }).catch(() => undefined)));
    ip('netns', 'delete', netns);
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    await start();
  } catch (err) {
    await teardown();
    throw err;
  }
  const [a, b, c] = podCidr.split('.');
  return {
    nodeName, netns, socketPath, podCidr, gateway: `${a}.${b}.${c}.1`, runtime, images, docker, kill, start, teardown,
    log: () => logText,
    inNetns: (cmd) => {
      const r = spawnSync('ip', ['netns', 'exec', netns, ...cmd], { encoding: 'utf8' });
      return { code: r.status ?? 1, stdout: r.stdout, stderr: r.stderr };
    },
  };
}
