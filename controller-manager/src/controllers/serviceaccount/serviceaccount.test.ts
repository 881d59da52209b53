import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ServiceAccounts, type Namespace, type ServiceAccount } from '@mk8s/api';
import { newControllerFixture } from '@mk8s/client/testing';
import type { Obj } from '../../util/meta.js';
import { ServiceAccountController } from './serviceaccount.js';

const ns = (name: string, extra: Partial<Namespace> = {}): Namespace => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name }, status: { phase: 'Active' }, ...extra });
const sa = (namespace: string, name: string): ServiceAccount => ({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace } });

const cases: { name: string; seed: (Namespace | ServiceAccount)[]; key: string; writes: string[] }[] = [
  { name: 'creates default in an active namespace without one', seed: [ns('a')], key: 'a', writes: ['create serviceaccounts'] },
  { name: 'leaves an existing default alone', seed: [ns('a'), sa('a', 'default')], key: 'a', writes: [] },
  { name: 'skips a terminating namespace', seed: [ns('t', { status: { phase: 'Terminating' } })], key: 't', writes: [] },
  { name: 'skips a namespace that is gone', seed: [], key: 'gone', writes: [] },
];
for (const tc of cases) {
  test(`serviceaccount: ${tc.name}`, async () => {
    const f = newControllerFixture();
    f.build((ctx) => new ServiceAccountController(ctx));
    for (const o of tc.seed) f.seed(o);
    await f.reconcile(tc.key);
    assert.deepEqual(f.actions({ writesOnly: true }), tc.writes);
    if (tc.writes.length) {
      const created = (await f.client.resource<Obj<ServiceAccount>>(ServiceAccounts, tc.key).list()).items;
      assert.deepEqual(created.map((x) => x.metadata.name), ['default']);
    }
  });
}

test('serviceaccount: deleting default queues its namespace (so it is recreated); other SAs do not', () => {
  const f = newControllerFixture();
  const c = f.build((ctx) => new ServiceAccountController(ctx));
  const sas = f.informers.informerFor(ServiceAccounts) as unknown as { add(o: unknown): void; delete(o: unknown): void };
  const stored = f.seed(sa('a', 'default'), sa('a', 'robot'));
  sas.delete({ ...sa('a', 'robot'), metadata: { name: 'robot', namespace: 'a' } });
  assert.equal(c.queue.len(), 0);
  sas.delete(stored);
  assert.equal(c.queue.len(), 1);
});
