import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tabwrite } from '../printers/tabwriter.js';
import { checkSortBy, milliValue, nodeMetricsLines, podMetricsLines, value, type PodMetrics } from './top.js';

const node = (name: string, cpu: string, memory: string) => ({ metadata: { name }, usage: { cpu, memory } });
const alloc = new Map([['node-1', { cpu: '2', memory: '8Gi' }], ['node-2', { cpu: '2', memory: '4Gi' }], ['node-3', { cpu: '1', memory: '1Gi' }]]);
const trim = (s: string) => s.split('\n').map((l) => l.trimEnd()).join('\n');

for (const [s, m, v] of [['123456789n', 124n, 1n], ['2m', 2n, 1n], ['1500u', 2n, 1n], ['1', 1000n, 1n], ['0', 0n, 0n], ['12Mi', 12582912000n, 12582912n]] as const) {
  test(`MilliValue/Value of ${s} round up as resource.Quantity`, () => { assert.equal(milliValue(s), m); assert.equal(value(s), v); });
}

test('top node: kubectl columns, percentages of allocatable, <unknown> for nodes without metrics', () => {
  const out = tabwrite(nodeMetricsLines([node('node-2', '250000000n', '1Gi'), node('node-1', '1500000n', '12160Ki')], alloc));
  assert.equal(trim(out), [
    'NAME     CPU(cores)   CPU(%)      MEMORY(bytes)   MEMORY(%)',
    'node-1   2m           0%          11Mi            0%',
    'node-2   250m         12%         1024Mi          25%',
    'node-3   <unknown>    <unknown>   <unknown>       <unknown>',
    '',
  ].join('\n'));
});

test('top node --sort-by cpu|memory: descending', () => {
  const ms = [node('a', '100m', '3Gi'), node('b', '300m', '1Gi'), node('c', '200m', '2Gi')];
  const names = (s: string) => s.trim().split('\n').slice(1).map((l) => l.split('\t')[0]);
  assert.deepEqual(names(nodeMetricsLines(ms, new Map(), { sortBy: 'cpu' })), ['b', 'c', 'a']);
  assert.deepEqual(names(nodeMetricsLines(ms, new Map(), { sortBy: 'memory' })), ['a', 'c', 'b']);
  assert.equal(nodeMetricsLines([], alloc), '');
  assert.throws(() => checkSortBy('name'), /--sort-by accepts only cpu or memory/);
});

const pods: PodMetrics[] = [
  { metadata: { name: 'web', namespace: 'default' }, containers: [{ name: 'b', usage: { cpu: '30m', memory: '8Mi' } }, { name: 'a', usage: { cpu: '1500000n', memory: '4Mi' } }] },
  { metadata: { name: 'coredns-1', namespace: 'kube-system' }, containers: [{ name: 'coredns', usage: { cpu: '3183212n', memory: '20Mi' } }] },
];

test('top pod: containers summed per pod (exactly, then rounded up)', () => {
  assert.equal(trim(tabwrite(podMetricsLines(pods))), ['NAME        CPU(cores)   MEMORY(bytes)', 'coredns-1   4m           20Mi', 'web         32m          12Mi', ''].join('\n'));
});

test('top pod -A --containers: NAMESPACE POD NAME, by namespace then name', () => {
  assert.equal(trim(tabwrite(podMetricsLines(pods, { withNamespace: true, containers: true }))), [
    'NAMESPACE     POD         NAME      CPU(cores)   MEMORY(bytes)',
    'default       web         a         2m           4Mi',
    'default       web         b         30m          8Mi',
    'kube-system   coredns-1   coredns   4m           20Mi',
    '',
  ].join('\n'));
});

test('top pod --sort-by memory --no-headers --sum', () => {
  assert.equal(trim(tabwrite(podMetricsLines(pods, { sortBy: 'memory', noHeaders: true, sum: true }))), [
    'coredns-1   4m         20Mi',
    'web         32m        12Mi',
    '            ________   ________',
    '            35m        32Mi',
    '',
  ].join('\n'));
});
