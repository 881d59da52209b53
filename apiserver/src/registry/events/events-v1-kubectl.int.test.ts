/**
 * events.k8s.io/v1 as a second view of core Events, on real etcd with the real kubectl: an event
 * created through either group reads back through the other with upstream's field mapping
 * (regarding/involvedObject, note/message, reportingController/reportingComponent, deprecated*),
 * list and watch serve the converted objects (field selectors by v1 names), events/v1 creates are
 * validated with the stricter v1 rules, and `kubectl events --for` (core/v1) sees them.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kubeconfig, startTestApiServer, type TestApiServer, kubectlRunner } from '../../testing/index.js';

describe('events.k8s.io/v1 view of core Events', () => {
  let srv: TestApiServer;
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mk8s-events-v1-'));
    srv = await startTestApiServer({ etcdMembers: 1 });
    await writeFile(join(dir, 'kubeconfig'), kubeconfig(srv.url));
  });
  after(async () => {
    await srv?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  const { kubectl, ok } = kubectlRunner({ kubeconfig: () => join(dir, 'kubeconfig'), cacheDir: () => join(dir, 'cache') });
  const create = async (obj: unknown) => {
    const f = join(dir, `${Math.random()}.json`);
    await writeFile(f, JSON.stringify(obj));
    return kubectl('create', '-f', f);
  };
  const api = async (path: string, init: RequestInit = {}) => {
    const r = await fetch(`${srv.url}${path}`, init);
    return { code: r.status, body: await r.json() as Record<string, any> };
  };

  test('a core event reads back as events.k8s.io/v1 with the renamed fields', async () => {
    const r = await create({
      apiVersion: 'v1', kind: 'Event', metadata: { name: 'core-1', namespace: 'default' },
      involvedObject: { kind: 'Pod', name: 'web', namespace: 'default', uid: 'u-1', apiVersion: 'v1' },
      reason: 'Started', message: 'Started container web', type: 'Normal', count: 3,
      source: { component: 'kubelet', host: 'node-1' }, firstTimestamp: '2026-01-01T00:00:00Z', lastTimestamp: '2026-01-01T00:01:00Z',
    });
    assert.equal(r.code, 0, r.stderr);
    const { code, body } = await api('/apis/events.k8s.io/v1/namespaces/default/events/core-1');
    assert.equal(code, 200);
    assert.equal(body['apiVersion'], 'events.k8s.io/v1');
    assert.deepEqual(body['regarding'], { kind: 'Pod', name: 'web', namespace: 'default', uid: 'u-1', apiVersion: 'v1' });
    assert.equal(body['note'], 'Started container web');
    assert.deepEqual(body['deprecatedSource'], { component: 'kubelet', host: 'node-1' });
    assert.equal(body['deprecatedCount'], 3);
    assert.equal(body['deprecatedFirstTimestamp'], '2026-01-01T00:00:00Z');
    assert.equal(body['deprecatedLastTimestamp'], '2026-01-01T00:01:00Z');
    assert.equal(body['eventTime'], null);
    assert.equal(body['involvedObject'], undefined);
    assert.equal(body['message'], undefined);
  });

  test('an events.k8s.io/v1 event is stored as the core event', async () => {
    const r = await create({
      apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name: 'v1-1', namespace: 'default' },
      eventTime: '2026-01-01T00:00:00.000000Z', reportingController: 'example.com/ctl', reportingInstance: 'ctl-1',
      action: 'Scale', reason: 'Scaled', note: 'Scaled up to 3', type: 'Normal',
      regarding: { kind: 'Deployment', name: 'web', namespace: 'default', apiVersion: 'apps/v1', uid: 'u-2' },
      series: { count: 2, lastObservedTime: '2026-01-01T00:05:00.000000Z' },
    });
    assert.equal(r.code, 0, r.stderr);
    const { body } = await api('/api/v1/namespaces/default/events/v1-1');
    assert.equal(body['apiVersion'], 'v1');
    assert.equal(body['message'], 'Scaled up to 3');
    assert.equal(body['reportingComponent'], 'example.com/ctl');
    assert.equal(body['reportingInstance'], 'ctl-1');
    assert.deepEqual(body['involvedObject'], { kind: 'Deployment', name: 'web', namespace: 'default', apiVersion: 'apps/v1', uid: 'u-2' });
    assert.deepEqual(body['series'], { count: 2, lastObservedTime: '2026-01-01T00:05:00.000000Z' });
  });

  test('events.k8s.io/v1 creates are validated with the v1 rules', async () => {
    const r = await create({ apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name: 'bad', namespace: 'default' }, reason: 'X', type: 'Normal' });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /The Event "bad" is invalid/);
    assert.match(r.stderr, /eventTime: Required value/);
    assert.match(r.stderr, /reportingController: Required value/);
    assert.match(r.stderr, /action: Required value/);
  });

  test('list, field selectors by v1 names, Table columns', async () => {
    const { body } = await api('/apis/events.k8s.io/v1/namespaces/default/events?fieldSelector=regarding.kind%3DDeployment');
    assert.equal(body['kind'], 'EventList');
    assert.equal(body['apiVersion'], 'events.k8s.io/v1');
    assert.deepEqual(body['items'].map((e: Record<string, any>) => [e['metadata']['name'], e['apiVersion'], e['note']]), [['v1-1', 'events.k8s.io/v1', 'Scaled up to 3']]);
    const bad = await api('/apis/events.k8s.io/v1/namespaces/default/events?fieldSelector=involvedObject.kind%3DPod');
    assert.equal(bad.code, 400);
    const table = await ok('get', 'events.v1.events.k8s.io');
    assert.match(table, /^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE\n/);
    assert.match(table, /Normal\s+Scaled\s+deployment\/web\s+Scaled up to 3/);
    assert.match(table, /Normal\s+Started\s+pod\/web\s+Started container web/);
  });

  test('watch serves converted events', async () => {
    const list = await api('/apis/events.k8s.io/v1/namespaces/default/events');
    const rv = list.body['metadata']['resourceVersion'] as string;
    const ctl = new AbortController();
    const res = await fetch(`${srv.url}/apis/events.k8s.io/v1/namespaces/default/events?watch=true&resourceVersion=${rv}`, { signal: ctl.signal });
    const reader = res.body!.getReader();
    await create({
      apiVersion: 'v1', kind: 'Event', metadata: { name: 'core-2', namespace: 'default' }, involvedObject: { kind: 'Pod', name: 'db', namespace: 'default' },
      reason: 'Pulled', message: 'pulled', type: 'Normal',
    });
    let text = '';
    const deadline = Date.now() + 10_000;
    while (!text.includes('\n') && Date.now() < deadline) {
      const { value, done } = await reader.read();
      if (done) break;
      text += Buffer.from(value).toString();
    }
    ctl.abort();
    const ev = JSON.parse(text.split('\n')[0]!) as { type: string; object: Record<string, any> };
    assert.equal(ev.type, 'ADDED');
    assert.equal(ev.object['apiVersion'], 'events.k8s.io/v1');
    assert.equal(ev.object['note'], 'pulled');
    assert.equal(ev.object['regarding']['name'], 'db');
  });

  test('patch and delete through events.k8s.io/v1 change the core event', async () => {
    const p = await kubectl('patch', 'events.v1.events.k8s.io', 'core-1', '--type=merge', '-p', '{"note":"patched"}');
    assert.equal(p.code, 0, p.stderr);
    assert.equal((await api('/api/v1/namespaces/default/events/core-1')).body['message'], 'patched');
    assert.equal((await kubectl('delete', 'events.v1.events.k8s.io', 'core-1')).code, 0);
    assert.equal((await api('/api/v1/namespaces/default/events/core-1')).code, 404);
  });

  test('kubectl events --for lists the events of one object (core/v1 under the hood)', async () => {
    const out = await ok('events', '--for', 'deployment/web');
    assert.match(out, /Scaled\s+Deployment\/web\s+Scaled up to 3/i);
    assert.doesNotMatch(out, /pod\/db/i);
  });

  test('kubectl events --watch --for shows an event created through events.k8s.io/v1', async () => {
    const child = spawn('kubectl', ['--kubeconfig', join(dir, 'kubeconfig'), '--cache-dir', join(dir, 'cache'), 'events', '--watch', '--for', 'deployment/web'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { out += d.toString(); });
    try {
      // The watch prints the existing events first: once it does, it is established.
      const deadline = Date.now() + 15_000;
      while (!/Scaled/.test(out) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      assert.match(out, /Scaled/);
      const r = await create({
        apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name: 'v1-watch', namespace: 'default' },
        eventTime: '2026-01-01T00:10:00.000000Z', reportingController: 'example.com/ctl', reportingInstance: 'ctl-1',
        action: 'Rollout', reason: 'RolledOut', note: 'Rolled out revision 2', type: 'Normal',
        regarding: { kind: 'Deployment', name: 'web', namespace: 'default', apiVersion: 'apps/v1', uid: 'u-2' },
      });
      assert.equal(r.code, 0, r.stderr);
      while (!/Rolled out revision 2/.test(out) && Date.now() < deadline + 15_000) await new Promise((r2) => setTimeout(r2, 100));
      assert.match(out, /RolledOut\s+Deployment\/web\s+Rolled out revision 2/i);
    } finally {
      child.kill();
    }
  });
});
