/**
 * GenericPleg: the pod lifecycle event generator (upstream `pleg/generic.go`). Every relist it
 * lists the runtime's containers, compares each one's state with the previous relist and turns
 * the differences into events for the pod workers. Relisting (not runtime events) is what makes
 * a kubelet restart or a missed event harmless: the next relist sees the truth.
 */
import type { Clock, Logger } from '@mk8s/component-base';
import type { RuntimeService, ContainerState } from '@mk8s/proto';
import { POD_UID_LABEL } from './labels.js';

export type PlegState = 'running' | 'exited' | 'unknown' | 'non-existent';
export type PodLifecycleEventType = 'ContainerStarted' | 'ContainerDied' | 'ContainerRemoved' | 'ContainerChanged';
export interface PodLifecycleEvent { podUid: string; type: PodLifecycleEventType; containerId: string }

/** generateEvents turns one container's state pair into events (pure; table-tested). */
export function generateEvents(podUid: string, containerId: string, from: PlegState, to: PlegState): PodLifecycleEvent[] {
  if (from === to) return [];
  const ev = (type: PodLifecycleEventType): PodLifecycleEvent => ({ podUid, type, containerId });
  switch (to) {
    case 'running': return [ev('ContainerStarted')];
    case 'exited': return [ev('ContainerDied')];
    case 'unknown': return [ev('ContainerChanged')];
    case 'non-existent': return from === 'exited' ? [ev('ContainerRemoved')] : [ev('ContainerDied'), ev('ContainerRemoved')];
  }
}

/** eventState is the state a container is in after an event of type. */
export function eventState(type: PodLifecycleEventType): PlegState {
  switch (type) {
    case 'ContainerStarted': return 'running';
    case 'ContainerDied': return 'exited';
    case 'ContainerRemoved': return 'non-existent';
    case 'ContainerChanged': return 'unknown';
  }
}

/** plegState maps a CRI container state to a PLEG state (created counts as unknown, as upstream). */
export function plegState(s: ContainerState): PlegState {
  switch (s) {
    case 'CONTAINER_RUNNING': return 'running';
    case 'CONTAINER_EXITED': return 'exited';
    default: return 'unknown';
  }
}

export interface GenericPlegOptions {
  runtime: RuntimeService;
  clock: Clock;
  logger: Logger;
  /** Called for every event, in order; must not block. */
  onEvent: (ev: PodLifecycleEvent) => void;
  /** @default 1000 */
  relistPeriodMs?: number;
}

export class GenericPleg {
  /** containerId → [podUid, state] as of the last relist. */
  private last = new Map<string, { podUid: string; state: PlegState }>();
  private lastRelistMs = 0;
  constructor(private readonly o: GenericPlegOptions) {}

  /** One relist; safe to call directly from tests. Rejects when the runtime is unreachable. */
  async relist(): Promise<PodLifecycleEvent[]> {
    const [containers, sandboxes] = await Promise.all([this.o.runtime.listContainers(), this.o.runtime.listPodSandbox()]);
    const now = new Map<string, { podUid: string; state: PlegState }>();
    for (const c of containers) now.set(c.id, { podUid: c.labels[POD_UID_LABEL] ?? '', state: plegState(c.state) });
    // Sandboxes count as containers, so a dead sandbox wakes its pod's worker too.
    for (const s of sandboxes) now.set(s.id, { podUid: s.labels[POD_UID_LABEL] ?? s.metadata.uid, state: s.state === 'SANDBOX_READY' ? 'running' : 'exited' });
    const events: PodLifecycleEvent[] = [];
    for (const id of new Set([...this.last.keys(), ...now.keys()])) {
      const before = this.last.get(id);
      const after = now.get(id);
      const podUid = after?.podUid ?? before?.podUid ?? '';
      if (!podUid) continue;
      events.push(...generateEvents(podUid, id, before?.state ?? 'non-existent', after?.state ?? 'non-existent'));
    }
    this.last = now;
    this.lastRelistMs = this.o.clock.now();
    for (const ev of events) this.o.onEvent(ev);
    return events;
  }

  /** Pod uids that owned a container or sandbox at the last relist (housekeeping reads this instead of listing again). */
  podUids(): Set<string> { return new Set([...this.last.values()].map((x) => x.podUid).filter(Boolean)); }

  /** Whether a relist has completed (so podUids() covers every container that existed before this process). */
  hasRelisted(): boolean { return this.lastRelistMs > 0; }

  /** Healthy while relists keep succeeding (upstream: within 3 minutes). */
  healthy(): boolean { return this.o.clock.now() - this.lastRelistMs < 3 * 60_000; }

  /** Relists every period until signal aborts. */
  async run(signal: AbortSignal): Promise<void> {
    const period = this.o.relistPeriodMs ?? 1000;
    while (!signal.aborted) {
      try { await this.relist(); } catch (err) { this.o.logger.warn({ err }, 'Could not relist the runtime'); }
      await this.o.clock.sleep(period, signal).catch(() => undefined);
    }
  }
}
