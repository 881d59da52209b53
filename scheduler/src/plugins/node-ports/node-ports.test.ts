import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CycleState, NodeInfo, PodInfo } from '../../framework/types.js';
import { Status } from '../../framework/status.js';
import { makeNode, makePod } from '../../testing/wrappers.js';
import { ERR_REASON, NodePorts } from './node-ports.js';

for (const tc of [
  { name: 'no host ports skips the filter', pod: makePod('p'), existing: [8080], want: Status.skip(), filter: undefined },
  { name: 'free port fits', pod: makePod('p', { hostPorts: [80] }), existing: [8080], want: undefined, filter: undefined },
  { name: 'taken port is rejected', pod: makePod('p', { hostPorts: [8080] }), existing: [8080], want: undefined, filter: Status.unschedulable(ERR_REASON) },
]) test(tc.name, () => {
  const ni = new NodeInfo(makeNode('n'), new PodInfo(makePod('old', { nodeName: 'n', hostPorts: tc.existing })));
  const pl = new NodePorts(); const s = new CycleState();
  assert.deepEqual(pl.preFilter(s, tc.pod), tc.want);
  if (!tc.want) assert.deepEqual(pl.filter(s, tc.pod, ni), tc.filter);
});
