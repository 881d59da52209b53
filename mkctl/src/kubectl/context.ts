/**
 * What every kubectl-style command shares: the global flags (--kubeconfig, --context,
 * -n/--namespace), a lazily built clientset, and the output streams (injected in tests).
 */
import { existsSync } from 'node:fs';
import { statePaths } from '../cluster/paths.js';
import { createClientset, kubeconfigPaths, loadKubeConfig, restConfigFromKubeConfig, type RestClientset, type KubeConfig } from '@mk8s/client';

export interface GlobalFlags { kubeconfig?: string; context?: string; namespace?: string; server?: string }

export interface Streams {
  out: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  err: NodeJS.WritableStream & { isTTY?: boolean };
  in: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (raw: boolean) => unknown };
}

/** A CLI error with kubectl's exit code (1 by default); printed as one line. */
export class CliError extends Error {
  constructor(message: string, readonly exitCode = 1) { super(message); this.name = 'CliError'; }
}

export class CliContext {
  private cs: RestClientset | undefined;
  private kc: KubeConfig | undefined;
  constructor(readonly flags: GlobalFlags, readonly streams: Streams) {}

  kubeconfig(): KubeConfig {
    if (!this.kc) {
      // kubectl's lookup first; then the local cluster's own kubeconfig so `make up` then `mkctl get pods` just works.
      const paths = kubeconfigPaths(this.flags.kubeconfig);
      const local = statePaths().kubeconfig;
      const path = this.flags.kubeconfig ?? (!process.env['KUBECONFIG'] && !paths.some((p) => existsSync(p)) && existsSync(local) ? local : undefined);
      this.kc = loadKubeConfig(path);
    }
    return this.kc;
  }

  get client(): RestClientset {
    if (!this.cs) {
      if (this.flags.server) this.cs = createClientset({ server: this.flags.server, userAgent: 'mkctl', qps: 0 });
      else {
        const rc = restConfigFromKubeConfig(this.kubeconfig(), this.flags.context ? { context: this.flags.context } : {});
        this.cs = createClientset({ restConfig: rc, userAgent: 'mkctl', qps: 0 });
      }
    }
    return this.cs;
  }

  /** -n, else the context's namespace, else default. */
  get namespace(): string {
    return this.flags.namespace || this.client.namespace || 'default';
  }

  print(s: string): void { this.streams.out.write(s); }
  printErr(s: string): void { this.streams.err.write(s); }

  async close(): Promise<void> { await this.cs?.close(); }
}
