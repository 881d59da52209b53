import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CycleState, NodeInfo } from '../../framework/types.js';
import { Status } from '../../framework/status.js';
import { makeNode, makePod } from '../../testing/wrappers.js';
import { ERR_REASON_UNSCHEDULABLE, NodeUnschedulable } from './node-unschedulable.js';

for (const tc of [
  { name: 'schedulable node admits any pod', pod: makePod('p'), unschedulable: false, want: undefined },
  { name: 'cordoned node rejects a pod', pod: makePod('p'), unschedulable: true, want: Status.unschedulableAndUnresolvable(ERR_REASON_UNSCHEDULABLE) },
  {
    name: 'cordoned node admits a pod tolerating the unschedulable taint', unschedulable: true, want: undefined,
    pod: makePod('p', { tolerations: [{ key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' }] }),
  },
]) test(tc.name, () => assert.deepEqual(new NodeUnschedulable().filter(new CycleState(), tc.pod, new NodeInfo(makeNode('n', { unschedulable: tc.unschedulable }))), tc.want));
