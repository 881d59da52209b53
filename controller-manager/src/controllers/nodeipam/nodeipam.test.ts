import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Nodes, type Node } from '@mk8s/api';
import { newControllerFixture } from '@mk8s/client/testing';
import type { Obj } from '../../util/meta.js';
import { NodeIpamController } from './nodeipam.js';

const node = (name: string, podCIDR?: string): Node => ({ apiVersion: 'v1', kind: 'Node', metadata: { name }, spec: podCIDR ? { podCIDR, podCIDRs: [podCIDR] } : {} });

test('nodeipam: new nodes get distinct /24s, skipping ranges already assigned', async () => {
  const f = newControllerFixture();
  f.build((ctx) => new NodeIpamController(ctx));
  f.seed(node('a', '10.244.0.0/24'), node('b'), node('c'));
  await f.reconcile('b');
  await f.reconcile('c');
  await f.reconcile('b'); // the cache still shows b without a CIDR: the same range is written again
  const nodes = (await f.client.resource<Obj<Node>>(Nodes).list()).items;
  assert.deepEqual(Object.fromEntries(nodes.map((n) => [n.metadata.name, n.spec?.podCIDR])), { a: '10.244.0.0/24', b: '10.244.1.0/24', c: '10.244.2.0/24' });
  assert.deepEqual(nodes.find((n) => n.metadata.name === 'b')?.spec?.podCIDRs, ['10.244.1.0/24']);
});
