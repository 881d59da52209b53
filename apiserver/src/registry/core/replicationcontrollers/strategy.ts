import { ReplicationControllers } from '@mk8s/api';
import type { RestStrategy } from '../../generic/strategy.js';

/** rcStrategy: status only through /status, generation bumped on spec changes. */
export const replicationControllerStrategy: RestStrategy = {
  resource: ReplicationControllers,
  tracksGeneration: true,
  prepareForCreate(rc) {
    rc['status'] = { replicas: 0 };
  },
};
