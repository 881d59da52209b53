import { spawn } from 'node:child_process';
import { join } from 'node:path';
import Docker from 'dockerode';
import { runPlugin } from '@mk8s/cni/bridge-plugin';
import { newRegistry, serveHealth, silentLogger, type Component, type Logger } from '@mk8s/component-base';
import { serveCri } from '@mk8s/proto';
import { CniNetwork, type CniExec } from './cni/cni.js';
import type { ShimContext } from './context.js';
import { DockerImageService, DockerRuntimeService } from './docker-service.js';
import { StatsReader } from './stats-reader.js';
import { ensureCgroupMounts } from './cgroup-mount.js';

/** Options for {@link createCriDockerShim}. */
export interface CriDockerShimOptions {
  /** Unix socket the CRI gRPC server listens on (replaced if it exists). */
  socketPath: string;
  /** The node this shim serves; its containers carry io.mk8s.node=<nodeName>. */
  nodeName: string;
  /** @default new Docker() (the local /var/run/docker.sock) */
  docker?: Docker;
  /** @default 'cni' */
  networkPlugin?: 'cni' | 'none';
  /** @default '/etc/cni/net.d' */
  cniConfDir?: string;
  /** @default ['/opt/cni/bin', '/usr/lib/cni'] */
  cniBinDirs?: string[];
  /** host-local's data dir in the config the shim writes. @default /var/lib/cni/mk8s/<nodeName> */
  cniDataDir?: string;
  /** When set, the CNI config is written for this pod CIDR at start (the kubelet can also pass it later). */
  podCidr?: string;
  /** @default 'mk8s/pause:3.9' */
  pauseImage?: string;
  /** /healthz, /readyz, /metrics port; undefined = no health server, 0 = pick one. */
  healthPort?: number;
  /** @default '127.0.0.1' */
  healthHost?: string;
  logger?: Logger;
  /** Injected plugin runner (tests). */
  cniExec?: CniExec;
  /** Run the mk8s-bridge plugin in the shim's process instead of exec'ing it. @default true */
  cniInProcess?: boolean;
  /**
   * Where the cgroup tree is read. When it is empty (`ip netns exec` remounted /sys), the shim
   * mounts the hierarchies there in its own mount namespace (cgroup-mount.ts). @default '/sys/fs/cgroup'
   */
  cgroupRoot?: string;
}

/** What the shim exposes besides Component: the services (for in-process use) and ports. */
export interface CriDockerShim extends Component {
  readonly runtime: DockerRuntimeService;
  readonly images: DockerImageService;
  /** The health port once ready (when healthPort was given). */
  healthPort(): number | undefined;
}

const runCommand = (cmd: string, args: string[]): Promise<{ code: number; stdout: string }> => new Promise((resolve) => {
  const p = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'ignore'] });
  const out: Buffer[] = [];
  p.stdout.on('data', (b: Buffer) => out.push(b));
  p.on('error', () => resolve({ code: 127, stdout: '' }));
  p.on('close', (code) => resolve({ code: code ?? 1, stdout: Buffer.concat(out).toString() }));
});

/**
 * createCriDockerShim builds the CRI shim: a gRPC server on a unix socket driving Docker. `run`
 * serves until the signal aborts, then drains calls and closes the socket.
 */
export function createCriDockerShim(o: CriDockerShimOptions): CriDockerShim {
  const logger = o.logger ?? silentLogger();
  const networkPlugin = o.networkPlugin ?? 'cni';
  const cni = networkPlugin === 'cni'
    ? new CniNetwork({
      confDir: o.cniConfDir ?? '/etc/cni/net.d',
      binDirs: o.cniBinDirs ?? ['/opt/cni/bin', '/usr/lib/cni'],
      ipamDataDir: o.cniDataDir ?? join('/var/lib/cni/mk8s', o.nodeName),
      ...(o.cniExec ? { exec: o.cniExec } : {}),
      ...(o.cniInProcess ?? !o.cniExec ? { inProcess: { 'mk8s-bridge': (env, stdin) => runPlugin({ env, stdin }) } } : {}),
    })
    : undefined;
  const ctx: ShimContext = {
    docker: o.docker ?? new Docker(),
    nodeName: o.nodeName,
    pauseImage: o.pauseImage ?? 'mk8s/pause:3.9',
    networkPlugin,
    cni,
    ips: new Map(),
    sandboxes: new Map(),
    created: new Set(),
    startFailed: new Set(),
    logger,
    stats: new StatsReader({ logger, cgroupRoot: o.cgroupRoot ?? '/sys/fs/cgroup' }),
    run: runCommand,
  };
  const runtime = new DockerRuntimeService(ctx);
  const images = new DockerImageService(ctx);
  let markReady!: () => void;
  const ready = new Promise<void>((r) => { markReady = r; });
  let healthPort: number | undefined;

  return {
    name: 'cri-docker',
    ready,
    runtime,
    images,
    healthPort: () => healthPort,
    async run(signal: AbortSignal): Promise<void> {
      await ensureCgroupMounts({ root: o.cgroupRoot ?? '/sys/fs/cgroup', logger, run: ctx.run });
      if (o.podCidr) await runtime.updateRuntimeConfig({ networkConfig: { podCidr: o.podCidr } });
      // Not fatal (dockerd may come up later), but every sandbox would fail: say so early.
      await ctx.docker.getImage(ctx.pauseImage).inspect().catch((err: unknown) => {
        logger.warn({ err, image: ctx.pauseImage }, 'Pause image is not available; run images/build.sh');
      });
      const server = await serveCri({ socketPath: o.socketPath, runtime, image: images });
      let serving = true;
      const health = o.healthPort === undefined ? undefined : await serveHealth({
        port: o.healthPort,
        host: o.healthHost ?? '127.0.0.1',
        registry: newRegistry(),
        isReady: () => serving,
        isHealthy: async () => { try { await ctx.docker.ping(); return serving; } catch { return false; } },
      });
      healthPort = health?.port;
      logger.info({ socket: o.socketPath, node: o.nodeName, networkPlugin, healthPort }, 'Serving CRI');
      markReady();
      if (!signal.aborted) await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      serving = false;
      await server.close(5_000);
      await health?.close();
      logger.info('Stopped serving CRI');
    },
  };
}
