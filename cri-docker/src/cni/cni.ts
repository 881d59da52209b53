/**
 * A spec-style CNI runtime (libcni): loads the first network config list from the conf dir and
 * executes its plugins in order with stdin = the plugin's config (plus name, cniVersion and
 * prevResult) and CNI_* in the environment. ADD walks the list forwards, DEL backwards.
 *
 * Plugins run in the shim's network namespace (the node's netns in a cluster), so the bridge they
 * create lives there; CNI_NETNS points at the pause container's netns (/proc/<pid>/ns/net).
 */
import { spawn } from 'node:child_process';
import { mkdir, readdir, readFile, writeFile, rename } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { CriError } from '@mk8s/proto';

/** The filename the shim writes its own config to; sorts last so any other config wins. */
export const OWN_CONFLIST = '99-mk8s-bridge.conflist';

export interface CniPluginConf { type: string; [k: string]: unknown }
export interface CniConfList { cniVersion: string; name: string; plugins: CniPluginConf[]; file: string }

/** What a plugin execution needs; injected so unit tests run without real plugins. */
export type CniExec = (pluginPath: string, env: Record<string, string>, stdin: string) => Promise<{ code: number; stdout: string; stderr: string }>;

export const execPlugin: CniExec = (pluginPath, env, stdin) => new Promise((resolve, reject) => {
  const p = spawn(pluginPath, [], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  p.stdout.on('data', (b: Buffer) => out.push(b));
  p.stderr.on('data', (b: Buffer) => err.push(b));
  p.on('error', reject);
  p.on('close', (code) => resolve({ code: code ?? 1, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() }));
  p.stdin.end(stdin);
});

/**
 * A plugin the runtime runs in its own process instead of exec'ing the binary: same env, stdin and
 * stdout contract as the executable (which stays the spec-true entry point for any other runtime).
 */
export type InProcessPlugin = (env: Record<string, string>, stdin: string) => Promise<{ code: number; stdout: string }>;

export interface CniOptions {
  confDir: string;
  /** Directories searched for plugin binaries (CNI_PATH). */
  binDirs: string[];
  /** host-local's dataDir in the config the shim writes (per node, since nodes share a host). */
  ipamDataDir: string;
  exec?: CniExec;
  /**
   * Plugins by type that run in-process when their binary is found in binDirs (the shim runs
   * mk8s-bridge so: a node process start per ADD/DEL costs more than the ADD itself).
   */
  inProcess?: Record<string, InProcessPlugin>;
}

/** The pod a CNI call is for (passed as CNI_ARGS, as the kubelet/cri-dockerd do). */
export interface CniPodRef { namespace: string; name: string; uid: string }

/** CniNetwork runs ADD/DEL for sandboxes. Safe to call concurrently for different containers. */
export class CniNetwork {
  private readonly exec: CniExec;
  constructor(private readonly o: CniOptions) { this.exec = o.exec ?? execPlugin; }

  /** The config list in use: the first *.conflist / *.conf / *.json in confDir by name, or undefined. */
  async load(): Promise<CniConfList | undefined> {
    let files: string[];
    try { files = (await readdir(this.o.confDir)).filter((f) => /\.(conflist|conf|json)$/.test(f)).sort(); } catch { return undefined; }
    for (const f of files) {
      try {
        const raw = JSON.parse(await readFile(join(this.o.confDir, f), 'utf8')) as Record<string, unknown>;
        if (Array.isArray(raw['plugins'])) {
          return { cniVersion: String(raw['cniVersion'] ?? '0.4.0'), name: String(raw['name']), plugins: raw['plugins'] as CniPluginConf[], file: f };
        }
        // A single-plugin .conf is a list of one.
        if (typeof raw['type'] === 'string') {
          return { cniVersion: String(raw['cniVersion'] ?? '0.4.0'), name: String(raw['name']), plugins: [raw as CniPluginConf], file: f };
        }
      } catch { /* skip unreadable configs, as libcni does */ }
    }
    return undefined;
  }

  /**
   * Writes the shim's own bridge + host-local config for podCidr (no masquerade: nothing may leave
   * the machine). Idempotent; rewrites only when the content changes. Returns whether it wrote.
   */
  async writeOwnConfig(podCidr: string): Promise<boolean> {
    const conf = {
      cniVersion: '1.0.0',
      name: 'mk8s',
      plugins: [{
        type: 'bridge', bridge: 'cni0', isGateway: true, ipMasq: false, hairpinMode: true,
        ipam: { type: 'host-local', ranges: [[{ subnet: podCidr }]], routes: [{ dst: '0.0.0.0/0' }], dataDir: this.o.ipamDataDir },
      }],
    };
    const text = `${JSON.stringify(conf, null, 2)}\n`;
    const path = join(this.o.confDir, OWN_CONFLIST);
    if (existsSync(path) && (await readFile(path, 'utf8')) === text) return false;
    await mkdir(this.o.confDir, { recursive: true });
    await writeFile(`${path}.tmp`, text);
    await rename(`${path}.tmp`, path);
    return true;
  }

  private findPlugin(type: string): string {
    for (const d of this.o.binDirs) if (existsSync(join(d, type))) return join(d, type);
    throw new CriError('FailedPrecondition', `CNI plugin "${type}" not found in ${this.o.binDirs.join(':')}`);
  }

  private async invoke(command: 'ADD' | 'DEL', list: CniConfList, plugin: CniPluginConf, containerId: string, netns: string, pod: CniPodRef, prevResult: unknown): Promise<unknown> {
    const stdin: Record<string, unknown> = { ...plugin, cniVersion: list.cniVersion, name: list.name };
    if (prevResult !== undefined) stdin['prevResult'] = prevResult;
    const env: Record<string, string> = {
      CNI_COMMAND: command,
      CNI_CONTAINERID: containerId,
      CNI_NETNS: netns,
      CNI_IFNAME: 'eth0',
      CNI_PATH: this.o.binDirs.join(':'),
      CNI_ARGS: `IgnoreUnknown=1;K8S_POD_NAMESPACE=${pod.namespace};K8S_POD_NAME=${pod.name};K8S_POD_INFRA_CONTAINER_ID=${containerId};K8S_POD_UID=${pod.uid}`,
      PATH: process.env['PATH'] ?? '/usr/sbin:/usr/bin:/sbin:/bin',
    };
    const path = this.findPlugin(plugin.type);
    const local = this.o.inProcess?.[plugin.type];
    const r = local ? { stderr: '', ...(await local(env, JSON.stringify(stdin))) } : await this.exec(path, env, JSON.stringify(stdin));
    if (r.code !== 0) {
      let msg = r.stderr.trim() || r.stdout.trim();
      try { const e = JSON.parse(r.stdout) as { msg?: string; details?: string; code?: number }; msg = [e.msg, e.details].filter(Boolean).join(': '); } catch { /* not JSON */ }
      throw new CriError('Internal', `CNI ${command} with plugin ${plugin.type} failed: ${msg}`);
    }
    if (command === 'DEL' || !r.stdout.trim()) return prevResult;
    return JSON.parse(r.stdout) as unknown;
  }

  /**
   * ADD: attaches the netns to the network; returns the pod IP (first IPv4 of the result).
   * Rejects FailedPrecondition when no config exists yet (NetworkReady is false).
   */
  async add(containerId: string, netns: string, pod: CniPodRef): Promise<{ ip: string }> {
    const list = await this.load();
    if (!list) throw new CriError('FailedPrecondition', `no CNI network config in ${this.o.confDir}`);
    let result: unknown;
    for (const p of list.plugins) result = await this.invoke('ADD', list, p, containerId, netns, pod, result);
    return { ip: ipFromResult(result) };
  }

  /** DEL: detaches and releases the IP. Idempotent; netns may be '' when the sandbox is gone. */
  async del(containerId: string, netns: string, pod: CniPodRef): Promise<void> {
    const list = await this.load();
    if (!list) return;
    for (const p of [...list.plugins].reverse()) await this.invoke('DEL', list, p, containerId, netns, pod, undefined);
  }
}

/** ipFromResult reads the first IPv4 address from a CNI result (0.3+ `ips`, or 0.2 `ip4`). */
export function ipFromResult(result: unknown): string {
  const r = result as { ips?: { address?: string }[]; ip4?: { ip?: string } } | undefined;
  const addrs = [...(r?.ips ?? []).map((x) => x.address ?? ''), r?.ip4?.ip ?? ''].filter(Boolean);
  const v4 = addrs.find((a) => a.includes('.')) ?? addrs[0] ?? '';
  return v4.split('/')[0] ?? '';
}
