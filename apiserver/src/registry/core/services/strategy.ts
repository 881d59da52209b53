import { Services } from '@mk8s/api';
import type { RestStrategy } from '../../generic/strategy.js';

export const serviceStrategy: RestStrategy = {
  resource: Services,
  tracksGeneration: false,
  nameIsDNSLabel: true,
  prepareForCreate(svc) {
    svc['status'] = { loadBalancer: {} };
  },
};
