export { applyDefaults, applyDefaultsInPlace, defaultPodTemplate } from './defaults.js';
export { admitPodDefaults, defaultImagePullPolicy, defaultPod, defaultPodSpec, imageTag, podQOSClass, canonicalizeResourceList, DEFAULT_SCHEDULER_NAME, DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS } from './pod.js';
export { preserveServiceAllocations } from './service-allocations.js';
export { defaultJobSpec, generateJobSelector, JOB_LABELS, JOB_COMPLETION_INDEX_ANNOTATION, JOB_TRACKING_FINALIZER, JOB_COMPLETION_INDEX_ENV, CRONJOB_SCHEDULED_TIMESTAMP_ANNOTATION } from './batch.js';
export { defaultHorizontalPodAutoscaler, defaultScaleUpRules, defaultScaleDownRules, DEFAULT_CPU_UTILIZATION } from './autoscaling.js';
