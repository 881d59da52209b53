/**
 * Container GC of one pod (upstream kuberuntime `container_gc.go`, per pod): keeps the newest two
 * containers of each name (the current one and the previous, for `logs --previous`) and drops
 * dead sandboxes other than the newest once none of their containers is kept. `gcPlan` decides
 * (pure); `ContainerGc.run` removes.
 */
import type { RuntimeService } from '@mk8s/proto';
import type { PodRuntimeState } from './status.js';

export interface GcPlan { containers: string[]; sandboxes: string[] }

export function gcPlan(rt: PodRuntimeState): GcPlan {
  const seen = new Map<string, number>();
  const containers: string[] = [];
  for (const c of rt.containers) {
    const n = (seen.get(c.metadata.name) ?? 0) + 1;
    seen.set(c.metadata.name, n);
    if (n > 2 && c.state === 'CONTAINER_EXITED') containers.push(c.id);
  }
  const gone = new Set(containers);
  const sandboxes = rt.sandboxes.slice(1)
    .filter((s) => s.state !== 'SANDBOX_READY' && !rt.containers.some((c) => c.podSandboxId === s.id && !gone.has(c.id)))
    .map((s) => s.id);
  return { containers, sandboxes };
}

export class ContainerGc {
  constructor(private readonly runtime: RuntimeService) {}
  /** Removes what gcPlan(rt) names; returns whether anything was removed. Failures are left for the next sync. */
  async run(rt: PodRuntimeState): Promise<boolean> {
    const plan = gcPlan(rt);
    for (const id of plan.containers) await this.runtime.removeContainer(id).catch(() => undefined);
    for (const id of plan.sandboxes) await this.runtime.removePodSandbox(id).catch(() => undefined);
    return plan.containers.length + plan.sandboxes.length > 0;
  }
}
