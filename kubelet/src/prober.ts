/**
 * Probes (upstream `prober/`): one worker per (pod, container, probe kind) runs the probe every
 * periodSeconds once initialDelaySeconds passed since the container started, and flips the
 * container's result after successThreshold/failureThreshold consecutive outcomes. A changed
 * result wakes the pod's worker, which acts on it (restart on liveness/startup failure, Ready).
 */
import { connect } from 'node:net';
import type { Clock, Logger } from '@mk8s/component-base';
import type { Container, Pod, Probe, LifecycleHandler } from '@mk8s/api';
import type { RuntimeService } from '@mk8s/proto';

export type ProbeKind = 'liveness' | 'readiness' | 'startup';
export interface ProbeOutcome { ok: boolean; output: string }

/** Prober runs one probe once. Resolves ok=false on failure (never rejects for a failed probe). */
export interface Prober {
  probe(handler: Probe | LifecycleHandler, target: { containerId: string; podIP: string; container: Container; timeoutMs: number }): Promise<ProbeOutcome>;
}

function resolvePort(port: number | string | undefined, c: Container): number {
  if (typeof port === 'number') return port;
  if (port === undefined) return 0;
  if (/^\d+$/.test(port)) return Number(port);
  return c.ports?.find((p) => p.name === port)?.containerPort ?? 0;
}

/** The real prober: exec through the runtime, httpGet and tcpSocket from the node's netns. */
export class RuntimeProber implements Prober {
  constructor(private readonly runtime: RuntimeService) {}
  async probe(h: Probe | LifecycleHandler, t: { containerId: string; podIP: string; container: Container; timeoutMs: number }): Promise<ProbeOutcome> {
    try {
      if (h.exec) {
        const r = await this.runtime.execSync(t.containerId, h.exec.command ?? [], Math.ceil(t.timeoutMs / 1000));
        const out = Buffer.concat([r.stdout, r.stderr]).toString('utf8').slice(0, 1024);
        return { ok: r.exitCode === 0, output: r.exitCode === 0 ? out : `command ${JSON.stringify((h.exec.command ?? []).join(' '))} exited with ${r.exitCode}: ${out}` };
      }
      if (h.httpGet) {
        const g = h.httpGet;
        const host = g.host || t.podIP;
        const port = resolvePort(g.port, t.container);
        const url = `${(g.scheme ?? 'HTTP').toLowerCase()}://${host.includes(':') ? `[${host}]` : host}:${port}${g.path?.startsWith('/') ? g.path : `/${g.path ?? ''}`}`;
        const headers: Record<string, string> = { 'user-agent': 'kube-probe/1.32' };
        for (const hd of g.httpHeaders ?? []) headers[hd.name] = hd.value;
        const res = await fetch(url, { headers, signal: AbortSignal.timeout(t.timeoutMs), redirect: 'manual' });
        await res.arrayBuffer().catch(() => undefined);
        const ok = res.status >= 200 && res.status < 400;
        return { ok, output: ok ? '' : `HTTP probe failed with statuscode: ${res.status}` };
      }
      if (h.tcpSocket) {
        const host = h.tcpSocket.host || t.podIP;
        const port = resolvePort(h.tcpSocket.port, t.container);
        return await new Promise<ProbeOutcome>((resolve) => {
          const s = connect({ host, port });
          const timer = setTimeout(() => { s.destroy(); resolve({ ok: false, output: `dial tcp ${host}:${port}: i/o timeout` }); }, t.timeoutMs);
          s.once('connect', () => { clearTimeout(timer); s.destroy(); resolve({ ok: true, output: '' }); });
          s.once('error', (err) => { clearTimeout(timer); resolve({ ok: false, output: `dial tcp ${host}:${port}: ${err.message}` }); });
        });
      }
      if ('sleep' in h && h.sleep) { await new Promise((r) => setTimeout(r, Math.min(h.sleep!.seconds * 1000, t.timeoutMs))); return { ok: true, output: '' }; }
      return { ok: true, output: '' };
    } catch (err) {
      const msg = err instanceof Error ? (err.name === 'TimeoutError' ? 'context deadline exceeded (Client.Timeout exceeded while awaiting headers)' : `${err.message}${(err as { cause?: Error }).cause ? `: ${(err as { cause?: Error }).cause?.message}` : ''}`) : String(err);
      return { ok: false, output: msg };
    }
  }
}

interface ProbeWorker {
  key: string;
  containerId: string;
  kind: ProbeKind;
  /** Current result: undefined until decided. */
  result: boolean | undefined;
  successes: number;
  failures: number;
  cancel: () => void;
  stopped: boolean;
}

export interface ProbeManagerOptions {
  prober: Prober;
  clock: Clock;
  logger: Logger;
  /** Called when a result flips (the pod's worker should sync). */
  onChange: (podUid: string) => void;
  /** Called on each failed attempt (the Unhealthy event). */
  onFailure: (pod: Pod, container: Container, kind: ProbeKind, output: string) => void;
}

const defaults = (p: Probe) => ({
  initialDelayMs: (p.initialDelaySeconds ?? 0) * 1000,
  periodMs: (p.periodSeconds ?? 10) * 1000,
  timeoutMs: (p.timeoutSeconds ?? 1) * 1000,
  successThreshold: p.successThreshold ?? 1,
  failureThreshold: p.failureThreshold ?? 3,
});

export class ProbeManager {
  private readonly workers = new Map<string, ProbeWorker>();
  constructor(private readonly o: ProbeManagerOptions) {}

  private key(uid: string, name: string, kind: ProbeKind): string { return `${uid}/${name}/${kind}`; }

  /**
   * Ensures workers for the running container (called by every pod sync). startedAtMs is when the
   * container started; initial is the readiness to assume (an adopted container keeps its Ready).
   */
  ensure(pod: Pod, c: Container, containerId: string, startedAtMs: number, podIP: string, initialReady?: boolean): void {
    const uid = pod.metadata?.uid ?? '';
    for (const kind of ['startup', 'liveness', 'readiness'] as const) {
      const probe = kind === 'startup' ? c.startupProbe : kind === 'liveness' ? c.livenessProbe : c.readinessProbe;
      const key = this.key(uid, c.name, kind);
      const w = this.workers.get(key);
      if (w && w.containerId === containerId) continue;
      if (w) { w.stopped = true; w.cancel(); this.workers.delete(key); }
      if (!probe) continue;
      const d = defaults(probe);
      const worker: ProbeWorker = {
        key, containerId, kind, successes: 0, failures: 0, cancel: () => undefined, stopped: false,
        result: kind === 'readiness' && initialReady ? true : undefined,
      };
      this.workers.set(key, worker);
      const tick = async () => {
        if (worker.stopped) return;
        // Liveness and readiness wait for the startup probe (upstream).
        if (kind !== 'startup' && c.startupProbe && this.workers.get(this.key(uid, c.name, 'startup'))?.result !== true) {
          worker.cancel = this.o.clock.setTimeout(() => void tick(), d.periodMs);
          return;
        }
        if (kind === 'startup' && worker.result === true) return;
        const out = await this.o.prober.probe(probe, { containerId, podIP, container: c, timeoutMs: d.timeoutMs });
        if (worker.stopped) return;
        const before = worker.result;
        if (out.ok) { worker.failures = 0; worker.successes++; if (worker.successes >= (kind === 'readiness' ? d.successThreshold : 1)) worker.result = true; }
        else {
          worker.successes = 0; worker.failures++;
          this.o.onFailure(pod, c, kind, out.output);
          if (worker.failures >= d.failureThreshold) { worker.result = false; worker.failures = 0; }
        }
        if (before !== worker.result) this.o.onChange(uid);
        if (worker.result === false && kind !== 'readiness') return; // the container will be restarted
        worker.cancel = this.o.clock.setTimeout(() => void tick(), d.periodMs);
      };
      const first = Math.max(0, startedAtMs + d.initialDelayMs - this.o.clock.now());
      worker.cancel = this.o.clock.setTimeout(() => void tick(), first);
    }
  }

  /** The result of kind for the container: true/false, or undefined while undecided. */
  result(uid: string, name: string, containerId: string, kind: ProbeKind): boolean | undefined {
    const w = this.workers.get(this.key(uid, name, kind));
    return w && w.containerId === containerId ? w.result : undefined;
  }

  /** Whether the container has a worker of kind (i.e. the spec has that probe and it runs). */
  has(uid: string, name: string, containerId: string, kind: ProbeKind): boolean {
    const w = this.workers.get(this.key(uid, name, kind));
    return !!w && w.containerId === containerId;
  }

  /** Stops the workers of one container, or of the whole pod when name is undefined. */
  remove(uid: string, name?: string): void {
    for (const [k, w] of this.workers) {
      if (k.startsWith(`${uid}/${name === undefined ? '' : `${name}/`}`)) { w.stopped = true; w.cancel(); this.workers.delete(k); }
    }
  }

  stopAll(): void { for (const w of this.workers.values()) { w.stopped = true; w.cancel(); } this.workers.clear(); }
}
