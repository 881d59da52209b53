import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeCronJob, describeJob } from './batch-describers.js';

test('describe job and cronjob print kubectl\'s fields', () => {
  const d = describeJob({ metadata: { name: 'pi', namespace: 'default' }, spec: { parallelism: 1, completions: 3, completionMode: 'Indexed', backoffLimit: 6, template: {} }, status: { active: 1, ready: 1, succeeded: 2, completedIndexes: '0,1', startTime: '2026-01-01T00:00:00Z' } }, [], Date.parse('2026-01-01T00:00:30Z'));
  assert.match(d, /Completion Mode:\s+Indexed/);
  assert.match(d, /Pods Statuses:\s+1 Active \(1 Ready\) \/ 2 Succeeded \/ 0 Failed/);
  assert.match(d, /Completed Indexes:\s+0,1/);
  assert.match(d, /Duration:\s+30s/);
  const c = describeCronJob({ metadata: { name: 'tick', namespace: 'default' }, spec: { schedule: '* * * * *', concurrencyPolicy: 'Forbid', suspend: false, jobTemplate: { spec: { template: {} } } }, status: { active: [{ name: 'tick-1' }] } }, [], 0);
  assert.match(c, /Schedule:\s+\* \* \* \* \*/);
  assert.match(c, /Concurrency Policy:\s+Forbid/);
  assert.match(c, /Active Jobs:\s+tick-1/);
});
