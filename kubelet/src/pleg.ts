/**
 * GenericPleg: the pod lifecycle event generator (upstream `pleg/generic.go`). Every relist it
 * lists the runtime's containers, compares each one's state with the previous relist and turns
 * the differences into events for the pod workers. Relisting (not runtime events) is what makes
 * a kubelet restart or a missed event harmless: the next relist sees the truth.
 *
 * It also fills the pod cache (upstream: the relist is the cache's writer): each pod with an
 * event is inspected (container and sandbox statuses) and `set` with the relist's start time,
 * then `updateTime` marks every other entry true as of that time, and only then are the events
 * handed on, so the sync an event wakes finds the state that caused it.
 */
import { runEvery, type Clock, type Logger } from '@mk8s/component-base';
import type { RuntimeService, ContainerState, Container, PodSandbox } from '@mk8s/proto';
import { POD_UID_LABEL } from './labels.js';
import type { PodCache } from './pod-cache.js';
import type { PodRuntimeState } from './status.js';

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
  /** Filled with the state of every pod whose containers changed. */
  cache?: PodCache;
  /** Reads a pod's full state from its listed sandboxes and containers (KubeRuntimeManager.inspect). */
  inspect?: (sandboxes: PodSandbox[], containers: Container[]) => Promise<PodRuntimeState>;
  /** Called after every successful relist with what it listed and its duration (the kubelet's PLEG metrics). */
  onRelist?: (o: { startMs: number; durationMs: number; sandboxes: PodSandbox[]; containers: Container[] }) => void;
}

export class GenericPleg {
  /** containerId → [podUid, state] as of the last relist. */
  private last = new Map<string, { podUid: string; state: PlegState }>();
  private lastRelistMs = 0;
  private readonly reinspect = new Set<string>();
  constructor(private readonly o: GenericPlegOptions) {}

  /** One relist; safe to call directly from tests. Rejects when the runtime is unreachable. */
  async relist(): Promise<PodLifecycleEvent[]> {
    const startMs = this.o.clock.now();
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
    const { cache, inspect } = this.o;
    if (cache && inspect) {
      // Pods with events, and those whose inspection failed last time (upstream: podsToReinspect).
      const uids = new Set([...events.map((e) => e.podUid), ...this.reinspect]);
      this.reinspect.clear();
      await Promise.all([...uids].map(async (uid) => {
        try {
          cache.set(uid, await inspect(sandboxes.filter((x) => (x.labels[POD_UID_LABEL] ?? x.metadata.uid) === uid), containers.filter((x) => x.labels[POD_UID_LABEL] === uid)), startMs);
        } catch (err) {
          this.reinspect.add(uid);
          this.o.logger.warn({ err, podUid: uid }, 'Could not inspect pod');
        }
      }));
      cache.updateTime(startMs);
    }
    this.lastRelistMs = this.o.clock.now();
    this.o.onRelist?.({ startMs, durationMs: this.lastRelistMs - startMs, sandboxes, containers });
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
    await runEvery(this.o.relistPeriodMs ?? 1000, () => this.relist().then(() => undefined), { clock: this.o.clock, signal, logger: this.o.logger, what: 'Relist of the runtime' });
  }
}
