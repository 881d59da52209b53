import { LimitRanges, ResourceQuotas } from '@mk8s/api';
import type { RestStrategy } from '../../generic/strategy.js';

/** resourcequotaStrategy: status (hard, used) is the controller's and admission's, written through /status; no generation. */
export const resourceQuotaStrategy: RestStrategy = {
  resource: ResourceQuotas,
  tracksGeneration: false,
  prepareForCreate(rq) {
    rq['status'] = {};
  },
};

/** limitrangeStrategy: a plain object, no status, no generation. */
export const limitRangeStrategy: RestStrategy = {
  resource: LimitRanges,
  tracksGeneration: false,
};
