/**
 * @mk8s/api/trace: the chain of an object (stored → owner → pods → scheduled → image → started →
 * ready → endpoints → kube-proxy), gathered from a generic GET and judged by one set of rules,
 * shared by `mkctl trace` and the dashboard's chain view. Browser-safe: no node: imports.
 */
export * from './link.js';
export * from './dns.js';
export { diagnose, missingRefs, selectorMatches, volumeNode, type TraceInput } from './diagnose.js';
export { diagnoseDaemonSet, diagnoseStatefulSet } from './workloads.js';
export { diagnoseCronJob, diagnoseJob } from './batch.js';
export { diagnoseHorizontalPodAutoscaler, metricVersus, type ScaleTargetView } from './hpa.js';
export { proxyEvidenceFromIptables } from './proxy-evidence.js';
export * from './gather.js';
