/**
 * autoscaling/v2 HorizontalPodAutoscalers (the storage version), as upstream's
 * registry/autoscaling/horizontalpodautoscaler strategy: create starts with an empty status,
 * main-resource updates keep the stored status and /status updates keep everything else (the
 * generic Store does both for resources with a status subresource). Defaults and validation come
 * from @mk8s/api (autoscaling.ts in defaults/ and validation/).
 */
import { HorizontalPodAutoscalers } from '@mk8s/api';
import type { RestStrategy } from '../generic/strategy.js';

export const horizontalPodAutoscalerStrategy: RestStrategy = {
  resource: HorizontalPodAutoscalers,
  prepareForCreate(hpa) {
    // autoscaling.HorizontalPodAutoscalerStatus{} as v2 JSON: desiredReplicas has no omitempty.
    hpa['status'] = { desiredReplicas: 0 };
  },
};
