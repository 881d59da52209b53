/** The in-tree plugins by name (plugins/registry.go). Out-of-tree plugins can be merged in. */
import type { PluginFactory } from '../framework/interfaces.js';
import * as defaultBinder from './default-binder/default-binder.js';
import * as defaultPreemption from './default-preemption/default-preemption.js';
import * as interPodAffinity from './inter-pod-affinity/inter-pod-affinity.js';
import * as nodeAffinity from './node-affinity/node-affinity.js';
import * as nodeName from './node-name/node-name.js';
import * as nodePorts from './node-ports/node-ports.js';
import * as balanced from './node-resources/balanced-allocation.js';
import * as fit from './node-resources/fit.js';
import * as nodeUnschedulable from './node-unschedulable/node-unschedulable.js';
import * as podTopologySpread from './pod-topology-spread/pod-topology-spread.js';
import * as prioritySort from './priority-sort/priority-sort.js';
import * as taintToleration from './taint-toleration/taint-toleration.js';
import * as volumeBinding from './volume-binding/volume-binding.js';

export const IN_TREE_REGISTRY: Readonly<Record<string, PluginFactory>> = Object.freeze({
  [prioritySort.NAME]: prioritySort.create,
  [nodeUnschedulable.NAME]: nodeUnschedulable.create,
  [nodeName.NAME]: nodeName.create,
  [nodePorts.NAME]: nodePorts.create,
  [taintToleration.NAME]: taintToleration.create,
  [nodeAffinity.NAME]: nodeAffinity.create,
  [fit.NAME]: fit.create,
  [balanced.NAME]: balanced.create,
  [podTopologySpread.NAME]: podTopologySpread.create,
  [interPodAffinity.NAME]: interPodAffinity.create,
  [volumeBinding.NAME]: volumeBinding.create,
  [defaultPreemption.NAME]: defaultPreemption.create,
  [defaultBinder.NAME]: defaultBinder.create,
});
