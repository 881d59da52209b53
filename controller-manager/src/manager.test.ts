import { test } from 'node:test';
import assert from 'node:assert/strict';
import { selectControllers } from './manager.js';

test('--controllers selects like upstream: *, names, aliases and -exclusions', () => {
  assert.deepEqual(selectControllers(['*']), ['replicaset', 'replicationcontroller', 'resourcequota', 'deployment', 'garbagecollector', 'namespace', 'endpoints', 'endpointslice', 'nodelifecycle', 'serviceaccount', 'root-ca-cert-publisher', 'persistentvolume-binder', 'persistentvolumeclaim-protection', 'persistentvolume-protection', 'local-path-provisioner', 'nodeipam', 'job', 'cronjob', 'podgc', 'ttl-after-finished', 'daemonset', 'statefulset', 'csrsigning', 'csrapproving', 'disruption', 'horizontalpodautoscaling']);
  assert.deepEqual(selectControllers(['*,-nodeipam,-garbage-collector-controller']), ['replicaset', 'replicationcontroller', 'resourcequota', 'deployment', 'namespace', 'endpoints', 'endpointslice', 'nodelifecycle', 'serviceaccount', 'root-ca-cert-publisher', 'persistentvolume-binder', 'persistentvolumeclaim-protection', 'persistentvolume-protection', 'local-path-provisioner', 'job', 'cronjob', 'podgc', 'ttl-after-finished', 'daemonset', 'statefulset', 'csrsigning', 'csrapproving', 'disruption', 'horizontalpodautoscaling']);
  assert.deepEqual(selectControllers(['serviceaccount-controller', 'root-ca-certificate-publisher-controller']), ['serviceaccount', 'root-ca-cert-publisher']);
  assert.deepEqual(selectControllers(['deployment-controller', 'replicaset']), ['replicaset', 'deployment']);
  assert.throws(() => selectControllers(['nope']), /not in the list of known controllers/);
});
