import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { MockAgent } from 'undici';
import { Pods } from '@mk8s/api';
import { FakeClock } from '@mk8s/component-base/testing';
import { createRateLimitingQueue } from './rate-limiting-queue.js';
import { exponentialBuckets, newWorkqueueMetricsProvider } from './workqueue-metrics.js';
import { newRestClientMetrics } from './rest-client-metrics.js';
import { createClientset } from './rest-clientset.js';

/** The value of one series; a histogram's buckets by `le` in labels. */
const value = async (reg: Registry, name: string, labels: Record<string, string>): Promise<number | undefined> => {
  const family = name;
  if ('le' in labels) name = `${name}_bucket`;
  const m = (await reg.getMetricsAsJSON()).find((x) => x.name === family);
  const v = (m?.values as { labels: Record<string, string | number>; value: number; metricName?: string }[] | undefined)
    ?.find((x) => (x.metricName ?? name) === name && Object.entries(labels).every(([k, want]) => String(x.labels[k]) === want));
  return v?.value;
};

describe('workqueue metrics', () => {
  test('client-go buckets: 10ns to 10s by decades', () => {
    assert.deepEqual(exponentialBuckets(10e-9, 10, 10), [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10]);
  });

  test('depth, adds, queue and work durations, unfinished work and retries follow the queue', async () => {
    const reg = new Registry();
    const clock = new FakeClock();
    const q = createRateLimitingQueue<string>({ name: 'replicaset', clock, metricsProvider: newWorkqueueMetricsProvider(reg), bucket: false });
    const name = { name: 'replicaset' };
    assert.equal(await value(reg, 'workqueue_depth', name), 0, 'the queue shows up at once');
    q.add('a'); q.add('a'); q.add('b');
    assert.equal(await value(reg, 'workqueue_adds_total', name), 2, 'a dirty key is not added twice');
    assert.equal(await value(reg, 'workqueue_depth', name), 2);
    clock.step(1500);
    assert.equal(await q.get(), 'a');
    assert.equal(await value(reg, 'workqueue_depth', name), 1);
    assert.equal(await value(reg, 'workqueue_queue_duration_seconds', { ...name, le: '10' }), 1, 'waited 1.5 s: in the 10 s bucket');
    assert.equal(await value(reg, 'workqueue_queue_duration_seconds', { ...name, le: '1' }), 0);
    clock.step(2000);
    assert.equal(await value(reg, 'workqueue_unfinished_work_seconds', name), 2);
    assert.equal(await value(reg, 'workqueue_longest_running_processor_seconds', name), 2);
    q.done('a');
    assert.equal(await value(reg, 'workqueue_unfinished_work_seconds', name), 0);
    assert.equal(await value(reg, 'workqueue_work_duration_seconds', { ...name, le: '10' }), 1);
    q.addRateLimited('a');
    assert.equal(await value(reg, 'workqueue_retries_total', name), 1);
    q.shutDown();
  });

  test('two queues of one registry share the families, one series each', async () => {
    const reg = new Registry();
    const provider = newWorkqueueMetricsProvider(reg);
    const a = createRateLimitingQueue<string>({ name: 'a', clock: new FakeClock(), metricsProvider: provider });
    const b = createRateLimitingQueue<string>({ name: 'b', clock: new FakeClock(), metricsProvider: newWorkqueueMetricsProvider(reg) });
    a.add('x'); b.add('x'); b.add('y');
    assert.equal(await value(reg, 'workqueue_depth', { name: 'a' }), 1);
    assert.equal(await value(reg, 'workqueue_depth', { name: 'b' }), 2);
    a.shutDown(); b.shutDown();
  });
});

describe('rest client metrics', () => {
  test('every request is counted by code, method and host, with its latency', async () => {
    const reg = new Registry();
    const agent = new MockAgent();
    agent.disableNetConnect();
    const pool = agent.get('https://127.0.0.1:6443');
    pool.intercept({ path: '/api/v1/namespaces/default/pods/a', method: 'GET' }).reply(200, { metadata: { name: 'a' } }, { headers: { 'content-type': 'application/json' } });
    pool.intercept({ path: '/api/v1/namespaces/default/pods/b', method: 'GET' }).reply(404, { kind: 'Status', code: 404, reason: 'NotFound' }, { headers: { 'content-type': 'application/json' } });
    pool.intercept({ path: '/api/v1/namespaces/default/pods/c', method: 'DELETE' }).replyWithError(new Error('connection reset'));
    const c = createClientset({ server: 'https://127.0.0.1:6443', dispatcher: agent, qps: 0, metrics: newRestClientMetrics(reg) });
    const pods = c.resource(Pods, 'default');
    await pods.get('a');
    await assert.rejects(pods.get('b'));
    await assert.rejects(pods.delete('c'));
    const host = '127.0.0.1:6443';
    assert.equal(await value(reg, 'rest_client_requests_total', { code: '200', method: 'GET', host }), 1);
    assert.equal(await value(reg, 'rest_client_requests_total', { code: '404', method: 'GET', host }), 1);
    assert.equal(await value(reg, 'rest_client_requests_total', { code: '<error>', method: 'DELETE', host }), 1);
    assert.equal(await value(reg, 'rest_client_request_duration_seconds', { verb: 'GET', host, le: '60' }), 2);
    assert.equal(await value(reg, 'rest_client_rate_limiter_duration_seconds', { verb: 'GET', host, le: '60' }), 2);
  });
});
