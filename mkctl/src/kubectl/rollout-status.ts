/**
 * Rollout status as kubectl's polymorphichelpers/rollout_status.go computes it, as pure
 * functions over the fetched object, plus the progress line (spinner on a TTY, plain lines
 * otherwise) that long waits print.
 */
import type * as apps from 'kubernetes-types/apps/v1.js';

export interface RolloutStatus { message: string; done: boolean; error?: string }

/** DeploymentStatusViewer.Status. */
export function deploymentRolloutStatus(d: apps.Deployment): RolloutStatus {
  const name = d.metadata?.name ?? '';
  const s = d.status ?? {};
  if ((d.metadata?.generation ?? 0) <= (s.observedGeneration ?? 0)) {
    const cond = s.conditions?.find((c) => c.type === 'Progressing');
    if (cond?.reason === 'ProgressDeadlineExceeded') return { message: '', done: false, error: `deployment "${name}" exceeded its progress deadline` };
    const want = d.spec?.replicas ?? 1;
    const updated = s.updatedReplicas ?? 0;
    if (updated < want) return { message: `Waiting for deployment "${name}" rollout to finish: ${updated} out of ${want} new replicas have been updated...`, done: false };
    if ((s.replicas ?? 0) > updated) return { message: `Waiting for deployment "${name}" rollout to finish: ${(s.replicas ?? 0) - updated} old replicas are pending termination...`, done: false };
    if ((s.availableReplicas ?? 0) < updated) return { message: `Waiting for deployment "${name}" rollout to finish: ${s.availableReplicas ?? 0} of ${updated} updated replicas are available...`, done: false };
    return { message: `deployment "${name}" successfully rolled out`, done: true };
  }
  return { message: 'Waiting for deployment spec update to be observed...', done: false };
}

/** ReplicaSets have no rollout; kubectl says so. */
export function unsupportedRollout(kind: string): RolloutStatus {
  return { message: '', done: false, error: `no status viewer has been implemented for ${kind}` };
}

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/**
 * Prints status messages: on a TTY one rewritten line with a spinner (and a final newline);
 * otherwise each distinct message once, as kubectl does.
 */
export class ProgressLine {
  private last = '';
  private frame = 0;
  private active = false;
  constructor(private readonly out: NodeJS.WritableStream & { isTTY?: boolean }) {}
  update(message: string): void {
    if (this.out.isTTY) {
      this.frame = (this.frame + 1) % FRAMES.length;
      this.out.write(`\r\x1b[2K${FRAMES[this.frame]} ${message}`);
      this.active = true;
    } else if (message !== this.last) this.out.write(`${message}\n`);
    this.last = message;
  }
  /** Ends the progress line with a final message. */
  done(message: string): void {
    if (this.out.isTTY && this.active) this.out.write('\r\x1b[2K');
    if (this.out.isTTY || message !== this.last) this.out.write(`${message}\n`);
    this.last = message;
    this.active = false;
  }
}
