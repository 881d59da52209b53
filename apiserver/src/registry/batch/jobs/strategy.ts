/**
 * Jobs (pkg/registry/batch/job/strategy.go): status only through /status; on create the
 * selector and the job-name / controller-uid labels are generated (they need the uid, so here
 * rather than in defaulting). Deleting a Job through the API without propagationPolicy orphans
 * its pods upstream (the legacy default); kubectl sends Background, as it does here.
 */
import { Jobs, generateJobSelector } from '@mk8s/api';
import type { RestStrategy } from '../../generic/strategy.js';

export const jobStrategy: RestStrategy = {
  resource: Jobs,
  tracksGeneration: true,
  prepareForCreate(job) {
    job['status'] = {};
    generateJobSelector(job);
  },
};
