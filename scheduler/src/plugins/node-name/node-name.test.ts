import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CycleState, NodeInfo } from '../../framework/types.js';
import { Status } from '../../framework/status.js';
import { makeNode, makePod } from '../../testing/wrappers.js';
import { ERR_REASON, NodeName } from './node-name.js';

for (const tc of [
  { name: 'no host specified', pod: makePod('p'), node: 'foo', want: undefined },
  { name: 'host matches', pod: makePod('p', { nodeName: 'foo' }), node: 'foo', want: undefined },
  { name: "host doesn't match", pod: makePod('p', { nodeName: 'bar' }), node: 'foo', want: Status.unschedulableAndUnresolvable(ERR_REASON) },
]) test(tc.name, () => assert.deepEqual(new NodeName().filter(new CycleState(), tc.pod, new NodeInfo(makeNode(tc.node))), tc.want));
