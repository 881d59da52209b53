/**
 * Status is what a plugin returns when it has something to say (kube-scheduler framework.Status).
 * `undefined` means Success everywhere; a Status carries a code and human-readable reasons.
 */
export type Code = 'Success' | 'Error' | 'Unschedulable' | 'UnschedulableAndUnresolvable' | 'Skip';

export class Status {
  readonly code: Code;
  readonly reasons: readonly string[];
  /** Only for code 'Error': the underlying failure. */
  readonly err: unknown;
  constructor(code: Code, reasons: readonly string[] = [], err?: unknown) {
    this.code = code;
    this.reasons = reasons;
    this.err = err;
  }
  /** Rejected on this node, but removing pods (preemption) might help. */
  static unschedulable(...reasons: string[]): Status { return new Status('Unschedulable', reasons); }
  /** Rejected on this node and preemption cannot help. */
  static unschedulableAndUnresolvable(...reasons: string[]): Status { return new Status('UnschedulableAndUnresolvable', reasons); }
  /** An internal failure: the pod is retried with backoff. */
  static error(err: unknown): Status {
    return new Status('Error', [err instanceof Error ? err.message : String(err)], err);
  }
  /** From PreFilter/PreScore: this plugin has nothing to do for this pod; its Filter/Score is skipped. */
  static skip(): Status { return new Status('Skip'); }
  /** Reasons joined as upstream's Status.Message(). */
  message(): string { return this.reasons.join(', '); }
  isRejected(): boolean { return this.code === 'Unschedulable' || this.code === 'UnschedulableAndUnresolvable'; }
}

/** True for undefined or an explicit Success status. */
export const isSuccess = (s: Status | undefined): boolean => s === undefined || s.code === 'Success';
