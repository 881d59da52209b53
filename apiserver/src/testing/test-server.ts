/**
 * startTestApiServer: a real apiserver on a free 127.0.0.1 port over a real etcd cluster (started
 * here unless endpoints are given), with a kubeconfig file for kubectl and clients.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger, type Logger } from '@mk8s/component-base';
import type { FastifyInstance } from 'fastify';
import { createApiServer, type ApiServerConfig } from '../apiserver.js';
import { startEtcdCluster } from './etcd-cluster.js';

export interface TestApiServerOptions extends Partial<Omit<ApiServerConfig, 'etcdServers'>> {
  /** Use this etcd cluster; a fresh 3-member one is started (and stopped) otherwise. */
  etcdEndpoints?: string[];
  /** @default 3 */
  etcdMembers?: number;
  logger?: Logger;
}

export interface TestApiServer {
  url: string;
  kubeconfigPath: string;
  etcdEndpoints: string[];
  /** The fastify instance (inject works too). */
  app: FastifyInstance;
  /** Stops the apiserver, the etcd cluster it started, and removes the temp dir. Idempotent. */
  stop(): Promise<void>;
}

export async function startTestApiServer(opts: TestApiServerOptions = {}): Promise<TestApiServer> {
  const etcd = opts.etcdEndpoints ? undefined : await startEtcdCluster({ members: opts.etcdMembers ?? 3 });
  const etcdEndpoints = opts.etcdEndpoints ?? etcd!.endpoints;
  const dir = await mkdtemp(join(tmpdir(), 'mk8s-apiserver-'));
  const { etcdEndpoints: _e, etcdMembers: _m, ...rest } = opts;
  const server = createApiServer({ ...rest, etcdServers: etcdEndpoints, port: opts.port ?? 0, logger: opts.logger ?? silentLogger() });
  const ac = new AbortController();
  const running = server.run(ac.signal);
  running.catch(() => { /* reported through ready */ });
  try {
    await server.ready;
  } catch (err) {
    await etcd?.stop();
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  const kubeconfigPath = join(dir, 'kubeconfig');
  await writeFile(kubeconfigPath, kubeconfig(server.url));
  let stopped: Promise<void> | undefined;
  return {
    url: server.url, kubeconfigPath, etcdEndpoints, app: server.app!,
    stop() {
      stopped ??= (async () => {
        ac.abort();
        await running.catch(() => undefined);
        await etcd?.stop();
        await rm(dir, { recursive: true, force: true });
      })();
      return stopped;
    },
  };
}

/** A kubeconfig for an unauthenticated http apiserver, namespace default. */
export function kubeconfig(server: string): string {
  return [
    'apiVersion: v1', 'kind: Config',
    'clusters:', '- name: mk8s', '  cluster:', `    server: ${server}`,
    'users:', '- name: admin', '  user: {}',
    'contexts:', '- name: mk8s', '  context:', '    cluster: mk8s', '    user: admin', '    namespace: default',
    'current-context: mk8s', '',
  ].join('\n');
}
