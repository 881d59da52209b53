/** One step of a traced chain, as `mkctl trace` prints it and the dashboard's chain view draws it. */
export type LinkStatus = 'ok' | 'broken' | 'waiting' | 'info';

export interface Link {
  step: string;
  status: LinkStatus;
  /** RFC 3339, when the evidence has one. */
  time?: string;
  evidence: string;
  /** Broken/waiting links: the component that owns the step. */
  owner?: string;
  /** What to look at next. */
  hint?: string;
}

/** What kube-proxy programmed on one node for a Service (from iptables-save or its metrics). */
export interface ProxyEvidence { node: string; present: boolean; endpoints: number; detail: string }

/** The first broken link, if any. */
export const firstBroken = (links: readonly Link[]): Link | undefined => links.find((l) => l.status === 'broken');
