import { test } from 'node:test';
import assert from 'node:assert/strict';
import { etcdInitialCluster, etcdMemberArgs } from './etcd-cluster.js';

test('etcdMemberArgs builds a static-cluster member on 127.0.0.1', () => {
  const initialCluster = etcdInitialCluster([
    { name: 'etcd0', peerPort: 2380 }, { name: 'etcd1', peerPort: 22380 }, { name: 'etcd2', peerPort: 32380 },
  ]);
  assert.equal(initialCluster, 'etcd0=http://127.0.0.1:2380,etcd1=http://127.0.0.1:22380,etcd2=http://127.0.0.1:32380');
  const args = etcdMemberArgs({ name: 'etcd1', dataDir: '.mk8s/etcd/etcd1', clientPort: 22379, peerPort: 22380, initialCluster, state: 'new' });
  for (const want of [
    '--name=etcd1', '--data-dir=.mk8s/etcd/etcd1',
    '--listen-client-urls=http://127.0.0.1:22379', '--advertise-client-urls=http://127.0.0.1:22379',
    '--listen-peer-urls=http://127.0.0.1:22380', '--initial-advertise-peer-urls=http://127.0.0.1:22380',
    `--initial-cluster=${initialCluster}`, '--initial-cluster-state=new',
  ]) assert.ok(args.includes(want), want);
});
