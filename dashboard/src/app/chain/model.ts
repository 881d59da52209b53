/**
 * The chain view's model, pure: the Links `@mk8s/api/trace` gives (the same ones `mkctl trace`
 * prints) → what the page draws: every link with its status as text (never colour only), the
 * steps the walk did not reach greyed, the first broken link flagged, and the logs to read.
 */
import type { Link, LinkStatus } from '@mk8s/api/trace';

export type ViewStatus = 'ok' | 'broken' | 'pending' | 'info' | 'unreached';

export interface ChainLinkView {
  /** Unique in the chain (steps may repeat across Services). */
  key: string;
  step: string;
  label: string;
  status: ViewStatus;
  /** The status in words, shown next to the colour. */
  statusText: string;
  time?: string;
  evidence: string;
  owner?: string;
  hint?: string;
  /** Where to read more: log files and `mkctl logs` commands, from the hint and the owner. */
  logs: string[];
  /** The first broken link (at most one). */
  firstBroken: boolean;
}

export interface ChainModel {
  links: ChainLinkView[];
  /** broken: some link is broken; pending: none broken, some waiting; ok otherwise. */
  verdict: 'ok' | 'broken' | 'pending';
  /** One sentence: where the chain breaks (or waits), or that every link is ok. */
  summary: string;
  firstBroken: ChainLinkView | undefined;
}

const STATUS: Record<LinkStatus, ViewStatus> = { ok: 'ok', broken: 'broken', waiting: 'pending', info: 'info' };
export const STATUS_TEXT: Record<ViewStatus, string> = { ok: 'OK', broken: 'Broken', pending: 'Pending', info: 'Info', unreached: 'Not reached' };

/** How each step reads on the page, and the component that normally does it. */
const LABELS: Record<string, string> = {
  stored: 'Stored (apiserver → etcd)',
  replicaset: 'ReplicaSet (deployment controller)',
  pods: 'Pods (owner controller)',
  selector: 'Selector (Service → pods)',
  scheduled: 'Scheduled (kube-scheduler)',
  node: 'Node (kubelet heartbeat)',
  volumes: 'Volumes (kubelet)',
  sandbox: 'Sandbox (runtime + CNI)',
  image: 'Image (kubelet → runtime)',
  started: 'Started (containers)',
  ready: 'Ready (readiness)',
  endpoints: 'Endpoints (endpointslice controller)',
  'kube-proxy': 'kube-proxy rules (each node)',
  dns: 'DNS (cluster DNS)',
  claim: 'Claim bound (persistentvolume binder)',
  volume: 'Volume',
  mounted: 'Mounted (kubelet)',
  complete: 'Complete (job controller)',
  'last job': 'Last Job (cronjob controller)',
  schedule: 'Schedule',
  target: 'Scale target',
  metrics: 'Metrics available (metrics API)',
  'current vs target': 'Current vs target',
  desired: 'Desired replicas (HPA controller)',
  'scale written': 'Scale written (HPA controller → target)',
};

export function stepLabel(step: string): string {
  if (LABELS[step]) return LABELS[step];
  if (step.startsWith('job ')) return `Job: ${stepLabel(step.slice(4))}`;
  return step.charAt(0).toUpperCase() + step.slice(1);
}

const POD_TAIL = ['scheduled', 'node', 'image', 'started', 'ready', 'endpoints', 'kube-proxy'];
/** The steps a full chain of each kind has, in order: what a stopped walk did not reach. */
export const EXPECTED_STEPS: Readonly<Record<string, readonly string[]>> = {
  Deployment: ['stored', 'replicaset', 'pods', ...POD_TAIL],
  ReplicaSet: ['stored', 'pods', ...POD_TAIL],
  Pod: ['stored', ...POD_TAIL],
  Service: ['stored', 'selector', ...POD_TAIL],
  PersistentVolumeClaim: ['stored', 'claim', 'volume', 'node', 'mounted'],
  Job: ['stored', 'pods', 'complete'],
  CronJob: ['stored', 'last job', 'job stored', 'job pods', 'job complete'],
  HorizontalPodAutoscaler: ['stored', 'target', 'metrics', 'current vs target', 'desired', 'scale written'],
};

/** Log files and `mkctl logs …` commands a hint names, then the owner's usual log. */
export function logsOf(l: Pick<Link, 'hint' | 'owner'>): string[] {
  const out: string[] = [];
  for (const m of (l.hint ?? '').matchAll(/\.mk8s\/logs\/[\w.<>-]+\.log|mkctl logs [^;,)]+/g)) out.push(m[0].trim());
  const o = l.owner ?? '';
  const node = /\bon ([\w.-]+)/.exec(o)?.[1];
  const own = /^kube-controller-manager|^controller-manager/.test(o) ? '.mk8s/logs/controller-manager.log'
    : /^kube-scheduler|^scheduler/.test(o) ? '.mk8s/logs/scheduler.log'
      : node && /^container runtime/.test(o) ? `.mk8s/logs/${node}-cri-docker.log`
        : node && /^kubelet/.test(o) ? `.mk8s/logs/${node}-kubelet.log`
          : node && /^kube-proxy/.test(o) && !o.includes(',') ? `.mk8s/logs/${node}-kube-proxy.log` : undefined;
  if (own && !out.includes(own)) out.push(own);
  return out;
}

/**
 * Builds the view of a chain. links are traceLinks' output for a target of kind; when the walk
 * stopped at a broken or waiting link, the kind's steps after it are added as 'unreached'.
 */
export function chainModel(kind: string, links: readonly Link[]): ChainModel {
  const seen = new Map<string, number>();
  const key = (step: string) => { const n = seen.get(step) ?? 0; seen.set(step, n + 1); return n ? `${step}#${n}` : step; };
  const views: ChainLinkView[] = links.map((l) => {
    const status = STATUS[l.status];
    return {
      key: key(l.step), step: l.step, label: stepLabel(l.step), status, statusText: STATUS_TEXT[status],
      ...(l.time ? { time: l.time } : {}), evidence: l.evidence,
      ...(l.owner ? { owner: l.owner } : {}), ...(l.hint ? { hint: l.hint } : {}),
      logs: status === 'broken' || status === 'pending' ? logsOf(l) : [], firstBroken: false,
    };
  });
  const last = links.at(-1);
  const expected = EXPECTED_STEPS[kind];
  if (expected && last && (last.status === 'broken' || last.status === 'waiting')) {
    const at = Math.max(-1, ...links.map((l) => expected.indexOf(l.step)));
    const present = new Set(links.map((l) => l.step));
    for (const step of expected.slice(at + 1)) {
      if (present.has(step)) continue;
      views.push({ key: key(step), step, label: stepLabel(step), status: 'unreached', statusText: STATUS_TEXT.unreached, evidence: 'not reached: an earlier link is not ok', logs: [], firstBroken: false });
    }
  }
  const broken = views.find((v) => v.status === 'broken');
  if (broken) broken.firstBroken = true;
  const pending = views.find((v) => v.status === 'pending');
  const verdict = broken ? 'broken' : pending ? 'pending' : 'ok';
  const summary = broken ? `Broken at ${broken.step}${broken.owner ? `: owned by ${broken.owner}` : ''}`
    : pending ? `Pending at ${pending.step}${pending.owner ? `: waiting on ${pending.owner}` : ''}`
      : views.length ? 'Every link is ok' : 'No links yet';
  return { links: views, verdict, summary, firstBroken: broken };
}

/** The route's kind as the trace names it: 'deployments', 'deploy', 'Deployment' → 'Deployment'. */
const KIND_ALIASES: Record<string, string> = {
  deployment: 'Deployment', deployments: 'Deployment', deploy: 'Deployment',
  replicaset: 'ReplicaSet', replicasets: 'ReplicaSet', rs: 'ReplicaSet',
  pod: 'Pod', pods: 'Pod', po: 'Pod',
  service: 'Service', services: 'Service', svc: 'Service',
  persistentvolumeclaim: 'PersistentVolumeClaim', persistentvolumeclaims: 'PersistentVolumeClaim', pvc: 'PersistentVolumeClaim',
  daemonset: 'DaemonSet', daemonsets: 'DaemonSet', ds: 'DaemonSet',
  statefulset: 'StatefulSet', statefulsets: 'StatefulSet', sts: 'StatefulSet',
  job: 'Job', jobs: 'Job', cronjob: 'CronJob', cronjobs: 'CronJob', cj: 'CronJob',
  horizontalpodautoscaler: 'HorizontalPodAutoscaler', horizontalpodautoscalers: 'HorizontalPodAutoscaler', hpa: 'HorizontalPodAutoscaler',
};
export const traceKindOf = (k: string): string | undefined => KIND_ALIASES[k.toLowerCase()];
