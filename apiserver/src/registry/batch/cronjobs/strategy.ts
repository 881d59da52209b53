/** CronJobs (pkg/registry/batch/cronjob/strategy.go): status only through /status. */
import { CronJobs } from '@mk8s/api';
import type { RestStrategy } from '../../generic/strategy.js';

export const cronJobStrategy: RestStrategy = {
  resource: CronJobs,
  tracksGeneration: true,
  prepareForCreate(cj) {
    cj['status'] = {};
  },
};
