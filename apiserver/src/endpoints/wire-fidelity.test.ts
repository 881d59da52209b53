/**
 * What unmodified clients send and expect on the wire (issue 14): booleans as the Python client
 * writes them, decode errors worded as upstream's, managedFields on every write.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '@mk8s/component-base';
import { FakeClock } from '@mk8s/component-base/testing';
import { MemoryStorage } from '../testing/memory-storage.js';
import { buildApiServer } from '../server.js';
import { parseRequestInfo, type ResourceRequestInfo } from './request-info.js';

async function setup(t: { after(fn: () => unknown): void }) {
  const clock = new FakeClock(Date.parse('2026-01-01T00:00:00Z'));
  const app = await buildApiServer({ storage: new MemoryStorage(), logger: silentLogger(), clock });
  await app.ready();
  t.after(() => app.close());
  return { app, clock };
}

const cm = (name: string, data: Record<string, string>) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });
const APPLY = { 'content-type': 'application/apply-patch+yaml' };

describe('boolean query parameters', () => {
  for (const [value, verb] of [['True', 'watch'], ['true', 'watch'], ['1', 'watch'], ['', 'watch'], ['False', 'list'], ['0', 'list'], ['FALSE', 'list']] as const) {
    test(`?watch=${value} is a ${verb}`, () => {
      const info = parseRequestInfo('GET', `/api/v1/namespaces/default/pods?watch=${value}`) as ResourceRequestInfo;
      assert.equal(info.verb, verb);
    });
  }

  test('force=True (the Python client) forces a conflicting apply', async (t) => {
    const { app } = await setup(t);
    const url = '/api/v1/namespaces/default/configmaps/f';
    assert.equal((await app.inject({ method: 'PATCH', url: `${url}?fieldManager=a`, headers: APPLY, payload: cm('f', { k: 'a' }) })).statusCode, 201);
    const conflict = await app.inject({ method: 'PATCH', url: `${url}?fieldManager=b&force=False`, headers: APPLY, payload: cm('f', { k: 'b' }) });
    assert.equal(conflict.statusCode, 409, conflict.body);
    const forced = await app.inject({ method: 'PATCH', url: `${url}?fieldManager=b&force=True`, headers: APPLY, payload: cm('f', { k: 'b' }) });
    assert.equal(forced.statusCode, 200, forced.body);
    assert.equal(forced.json().data.k, 'b');
  });

  test('orphanDependents=True is read as true', async (t) => {
    const { app } = await setup(t);
    await app.inject({ method: 'POST', url: '/api/v1/namespaces/default/configmaps', payload: cm('o', {}) });
    // orphanDependents together with propagationPolicy is refused: proves the value was read.
    const res = await app.inject({ method: 'DELETE', url: '/api/v1/namespaces/default/configmaps/o?orphanDependents=True&propagationPolicy=Background' });
    assert.equal(res.statusCode, 422, res.body);
    const ok = await app.inject({ method: 'DELETE', url: '/api/v1/namespaces/default/configmaps/o?orphanDependents=True' });
    assert.equal(ok.statusCode, 200, ok.body);
  });
});
