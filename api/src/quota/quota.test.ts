import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addLists, lessThanOrEqual, maskList, prettyPrint, subtractLists, isZeroList, equalLists } from './resource-list.js';
import { countedResource, matchesResourceName, podConstraints, usageOf } from './evaluator.js';
import { applyLimitRangeDefaults, defaultLimitRangeItem, validatePodLimits } from './limit-ranger.js';

test('resource lists add, subtract and compare exactly, printing canonical quantities', () => {
  assert.deepEqual(addLists({ cpu: '100m', memory: '1Gi' }, { cpu: '900m', pods: '1' }), { cpu: '1', memory: '1Gi', pods: '1' });
  assert.deepEqual(subtractLists({ cpu: '1' }, { cpu: '250m' }), { cpu: '750m' });
  assert.deepEqual(lessThanOrEqual({ cpu: '1100m', pods: '2' }, { cpu: '1', pods: '2', memory: '1' }), { ok: false, exceeded: ['cpu'] });
  assert.deepEqual(maskList({ a: '1', b: '2' }, ['b', 'c']), { b: '2' });
  assert.equal(prettyPrint({ pods: '1', 'count/configmaps': '3' }), 'count/configmaps=3,pods=1');
  assert.equal(isZeroList({ a: '0', b: '0m' }), true);
  assert.equal(equalLists({ cpu: '1000m' }, { cpu: '1' }), true);
});

for (const tc of [
  { name: 'count/deployments.apps', want: { group: 'apps', resource: 'deployments' } },
  { name: 'count/pods', want: { group: '', resource: 'pods' } },
  { name: 'secrets', want: { group: '', resource: 'secrets' } },
  { name: 'services.nodeports', want: { group: '', resource: 'services' } },
  { name: 'gold.storageclass.storage.k8s.io/requests.storage', want: { group: '', resource: 'persistentvolumeclaims' } },
  { name: 'requests.cpu', want: undefined },
]) test(`countedResource(${tc.name})`, () => assert.deepEqual(countedResource(tc.name), tc.want));

test('pod usage: app containers summed, init containers maxed, requests default the bare names', () => {
  const pod = { spec: {
    containers: [{ name: 'a', resources: { requests: { cpu: '100m' }, limits: { cpu: '200m' } } }, { name: 'b', resources: { requests: { cpu: '300m', memory: '64Mi' } } }],
    initContainers: [{ name: 'i', resources: { requests: { cpu: '1' } } }],
  }, status: { phase: 'Pending' } };
  assert.deepEqual(usageOf({ group: '', resource: 'pods' }, pod, 0),
    { 'count/pods': '1', pods: '1', cpu: '1', 'requests.cpu': '1', 'limits.cpu': '200m', memory: '64Mi', 'requests.memory': '64Mi' });
  assert.equal(matchesResourceName({ group: '', resource: 'pods' }, 'requests.cpu'), true);
  assert.equal(matchesResourceName({ group: '', resource: 'configmaps' }, 'requests.cpu'), false);
  assert.equal(podConstraints(['limits.cpu', 'pods'], pod), 'must specify limits.cpu for: b,i');
});

test('LimitRange items default limits from max and requests from the default, then min', () => {
  const item: Record<string, any> = { type: 'Container', max: { cpu: '2' }, min: { memory: '16Mi' }, default: { memory: '64Mi' } }; // eslint-disable-line @typescript-eslint/no-explicit-any
  defaultLimitRangeItem(item);
  assert.deepEqual(item['default'], { memory: '64Mi', cpu: '2' });
  assert.deepEqual(item['defaultRequest'], { memory: '64Mi', cpu: '2' });
});

test('LimitRanger sets only what a container leaves out and checks min and ratio', () => {
  const lr = { spec: { limits: [{ type: 'Container', default: { cpu: '500m' }, defaultRequest: { cpu: '100m' }, min: { cpu: '50m' }, maxLimitRequestRatio: { cpu: '4' } }] } };
  const pod = { spec: { containers: [{ name: 'a' }, { name: 'b', resources: { limits: { cpu: '1' }, requests: { cpu: '100m' } } }] } };
  assert.equal(applyLimitRangeDefaults(pod, [lr]), 'LimitRanger plugin set: cpu request for container a; cpu limit for container a');
  assert.deepEqual(validatePodLimits(pod, [lr]), ['cpu max limit to request ratio per Container is 4, but provided ratio is 5.000000',
    'cpu max limit to request ratio per Container is 4, but provided ratio is 10.000000']);
  const tiny = { spec: { containers: [{ name: 'c', resources: { requests: { cpu: '10m' }, limits: { cpu: '10m' } } }] } };
  assert.deepEqual(validatePodLimits(tiny, [lr]), ['minimum cpu usage per Container is 50m, but request is 10m']);
});
