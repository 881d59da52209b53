import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Pods, type KubeObject, type ResourceDescriptor } from '@mk8s/api';
import { toTable } from './table.js';

const NOW = Date.parse('2026-01-01T12:00:00Z');
const M = 60_000;
const ago = (ms: number) => new Date(NOW - ms).toISOString().replace(/\.\d+Z$/, 'Z');
const res = (group: string, resource: string): ResourceDescriptor => ({ ...Pods, group, resource });
const obj = (o: Record<string, unknown>): KubeObject =>
  ({ metadata: { name: 'x', creationTimestamp: ago(5 * M) }, ...o }) as KubeObject;
const template = { spec: { containers: [{ name: 'c', image: 'img' }] } };

const cases: { name: string; r: ResourceDescriptor; o: KubeObject; header: string[]; want: unknown[] }[] = [
  { name: 'daemonset', r: res('apps', 'daemonsets'),
    o: obj({ spec: { selector: { matchLabels: { a: 'b' } }, template: { spec: { ...template.spec, nodeSelector: { 'kubernetes.io/os': 'linux' } } } },
      status: { desiredNumberScheduled: 3, currentNumberScheduled: 3, numberReady: 2, updatedNumberScheduled: 3, numberAvailable: 2 } }),
    header: ['Name', 'Desired', 'Current', 'Ready', 'Up-to-date', 'Available', 'Node Selector', 'Age', '*Containers', '*Images', '*Selector'],
    want: ['x', 3, 3, 2, 3, 2, 'kubernetes.io/os=linux', '5m', 'c', 'img', 'a=b'] },
  { name: 'statefulset', r: res('apps', 'statefulsets'), o: obj({ spec: { replicas: 3, template }, status: { readyReplicas: 1 } }),
    header: ['Name', 'Ready', 'Age', '*Containers', '*Images'], want: ['x', '1/3', '5m', 'c', 'img'] },
  { name: 'running job', r: res('batch', 'jobs'), o: obj({ spec: { completions: 3, template, selector: { matchLabels: { j: 'x' } } }, status: { succeeded: 1, startTime: ago(2 * M) } }),
    header: ['Name', 'Status', 'Completions', 'Duration', 'Age', '*Containers', '*Images', '*Selector'],
    want: ['x', 'Running', '1/3', '2m', '5m', 'c', 'img', 'j=x'] },
  { name: 'complete job', r: res('batch', 'jobs'), o: obj({ spec: { template }, status: { succeeded: 1, startTime: ago(4 * M), completionTime: ago(4 * M - 12_000),
    conditions: [{ type: 'Complete', status: 'True' }] } }),
    header: ['Name', 'Status', 'Completions', 'Duration', 'Age', '*Containers', '*Images', '*Selector'],
    want: ['x', 'Complete', '1/1', '12s', '5m', 'c', 'img', '<none>'] },
  { name: 'parallel job not started', r: res('batch', 'jobs'), o: obj({ spec: { parallelism: 2, template } }),
    header: ['Name', 'Status', 'Completions', 'Duration', 'Age', '*Containers', '*Images', '*Selector'],
    want: ['x', 'Running', '0/1 of 2', '', '5m'] },
  { name: 'cronjob', r: res('batch', 'cronjobs'), o: obj({ spec: { schedule: '*/5 * * * *', suspend: false, jobTemplate: { spec: { template } } }, status: { active: [{}], lastScheduleTime: ago(M) } }),
    header: ['Name', 'Schedule', 'Timezone', 'Suspend', 'Active', 'Last Schedule', 'Age', '*Containers', '*Images', '*Selector'],
    want: ['x', '*/5 * * * *', '<none>', 'False', 1, '60s', '5m', 'c', 'img', '<none>'] },
  { name: 'replicationcontroller', r: res('', 'replicationcontrollers'), o: obj({ spec: { replicas: 2, selector: { app: 'a' }, template }, status: { replicas: 2, readyReplicas: 2 } }),
    header: ['Name', 'Desired', 'Current', 'Ready', 'Age', '*Containers', '*Images', '*Selector'], want: ['x', 2, 2, 2, '5m', 'c', 'img', 'app=a'] },
  { name: 'poddisruptionbudget', r: res('policy', 'poddisruptionbudgets'), o: obj({ spec: { minAvailable: '50%' }, status: { disruptionsAllowed: 1 } }),
    header: ['Name', 'Min Available', 'Max Unavailable', 'Allowed Disruptions', 'Age'], want: ['x', '50%', 'N/A', 1, '5m'] },
];

describe('workload printers', () => {
  for (const tc of cases) {
    test(tc.name, () => {
      const t = toTable(tc.r, [tc.o], { now: NOW });
      assert.deepEqual(t.columnDefinitions.map((c) => (c.priority ? `*${c.name}` : c.name)), tc.header);
      assert.equal(t.rows[0]!.cells.length, tc.header.length);
      assert.deepEqual(t.rows[0]!.cells.slice(0, tc.want.length), tc.want);
    });
  }
});
