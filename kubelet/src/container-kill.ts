/**
 * Hooks and kill (upstream kuberuntime `killContainer`, `executePreStopHook`, lifecycle handlers):
 * preStop bounded by the grace period, then stop with what is left (at least 2 s after a hook);
 * postStart after a start. CRI calls only; what to kill is decided in pod-actions.ts.
 */
import type { Clock } from '@mk8s/component-base';
import type { EventRecorder } from '@mk8s/client';
import type { Container, LifecycleHandler, Pod } from '@mk8s/api';
import { isNotFound, type ContainerStatus, type RuntimeService } from '@mk8s/proto';
import { PRESTOP_ANNOTATION } from './labels.js';
import type { Prober } from './prober.js';

export interface ContainerKillerOptions { runtime: RuntimeService; prober: Prober; recorder: EventRecorder; clock: Clock }

export class ContainerKiller {
  constructor(private readonly o: ContainerKillerOptions) {}

  /** Runs a lifecycle handler (exec, httpGet, tcpSocket) in or against the container. */
  runHook(h: LifecycleHandler, containerId: string, podIP: string, c: Container, timeoutMs: number): Promise<{ ok: boolean; output: string }> {
    return this.o.prober.probe(h, { containerId, podIP, container: c, timeoutMs });
  }

  /** postStart: a failure is an Event and the container is stopped (its restart goes through the back-off). */
  async postStart(pod: Pod, c: Container, containerId: string, podIP: string): Promise<boolean> {
    if (!c.lifecycle?.postStart) return true;
    const out = await this.runHook(c.lifecycle.postStart, containerId, podIP, c, 30_000);
    if (out.ok) return true;
    this.o.recorder.event(pod, 'Warning', 'FailedPostStartHook', 'PostStartHook failed: %s', out.output);
    await this.o.runtime.stopContainer(containerId, 2).catch(() => undefined);
    return false;
  }

  /** Runs preStop (bounded by the grace period), then stops the container with what is left. */
  async killContainer(pod: Pod | undefined, spec: Container | undefined, cur: ContainerStatus, graceSeconds: number, message: string): Promise<void> {
    if (cur.state !== 'CONTAINER_RUNNING' && cur.state !== 'CONTAINER_CREATED') return;
    const name = cur.metadata.name;
    if (pod) this.o.recorder.event(pod, 'Normal', 'Killing', message || 'Stopping container %s', name);
    const t0 = this.o.clock.now();
    let preStop: LifecycleHandler | undefined = spec?.lifecycle?.preStop;
    if (!preStop && cur.annotations[PRESTOP_ANNOTATION]) { try { preStop = JSON.parse(cur.annotations[PRESTOP_ANNOTATION]) as LifecycleHandler; } catch { /* ignore */ } }
    if (preStop && graceSeconds > 0 && cur.state === 'CONTAINER_RUNNING') {
      const podIP = pod?.status?.podIP ?? '';
      const out = await Promise.race([
        this.runHook(preStop, cur.id, podIP, spec ?? ({ name } as Container), graceSeconds * 1000),
        this.o.clock.sleep(graceSeconds * 1000).then(() => ({ ok: false, output: 'timed out' })),
      ]);
      if (!out.ok && pod) this.o.recorder.event(pod, 'Warning', 'FailedPreStopHook', 'PreStopHook failed: %s', out.output);
    }
    // Upstream keeps a minimum of 2 s for the stop after the hook.
    const left = Math.max(graceSeconds > 0 ? 2 : 0, Math.ceil(graceSeconds - (this.o.clock.now() - t0) / 1000));
    try { await this.o.runtime.stopContainer(cur.id, left); } catch (err) {
      if (isNotFound(err)) return;
      // A busy Docker may fail the stop of a container that did exit: only a live one is an error.
      const st = await this.o.runtime.containerStatus(cur.id).catch(() => undefined);
      if (st?.state !== 'CONTAINER_EXITED') throw err;
    }
  }
}
