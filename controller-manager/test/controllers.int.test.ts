/**
 * The controllers against the real apiserver and a 3-member etcd. No kubelet: PodSim reports
 * pods Running/Ready and the test writes Nodes and Leases.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ConfigMaps, Deployments, EndpointSlices, EndpointsResource, Events, Namespaces, Nodes, Pods, ReplicaSets, Services,
  type ConfigMap, type Deployment, type EndpointSlice, type Endpoints, type Event, type Node, type ReplicaSet, type Service,
} from '@mk8s/api';
import { createClientset, type Clientset } from '@mk8s/client';
import { startTestApiServer, type TestApiServer } from '@mk8s/apiserver/testing';
import { createControllerManager, type ControllerManagerComponent } from '../src/index.js';
import type { Obj } from '../src/util/meta.js';
import { createNamespace, PodSim, startNode, waitFor, type PodObj } from './helpers.js';

type D = Obj<Deployment>;
type RS = Obj<ReplicaSet>;

let server: TestApiServer;
let client: Clientset;
let cm: ControllerManagerComponent;
const ac = new AbortController();
let running: Promise<void>;
const stops: (() => void)[] = [];

before(async () => {
  server = await startTestApiServer();
  client = createClientset({ server: server.url, qps: 0 });
  cm = createControllerManager({
    client, healthPort: 0, leaderElect: false,
    nodeMonitorGracePeriodMs: 5000, nodeMonitorPeriodMs: 300, nodeStartupGracePeriodMs: 5000, defaultTolerationSeconds: 2, evictionQPS: 100,
  });
  running = cm.run(ac.signal);
  await cm.ready;
});
after(async () => {
  for (const s of stops) s();
  ac.abort();
  await running?.catch(() => undefined);
  await server?.stop();
});

let seq = 0;
async function scenario(prefix: string, fn: (ns: string, sim: PodSim) => Promise<void>, simOpts: ConstructorParameters<typeof PodSim>[2] = {}): Promise<void> {
  const ns = `${prefix}-${++seq}`;
  await createNamespace(client, ns);
  const sim = new PodSim(client, ns, simOpts);
  await sim.start();
  try { await fn(ns, sim); } finally { sim.stop(); }
}

const template = (app: string, image: string) => ({
  metadata: { labels: { app } },
  spec: { terminationGracePeriodSeconds: 0, containers: [{ name: 'c', image, ports: [{ name: 'http', containerPort: 8080 }] }] },
});
function deployment(name: string, replicas: number, image: string, extra: Partial<NonNullable<Deployment['spec']>> = {}): D {
  return {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name },
    spec: { replicas, selector: { matchLabels: { app: name } }, template: template(name, image), strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 1 } }, ...extra },
  } as D;
}
const pods = (ns: string) => client.resource<PodObj>(Pods, ns);
const livePods = async (ns: string) => (await pods(ns).list()).items.filter((p) => !p.metadata.deletionTimestamp);
const isReady = (p: PodObj) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

async function rolledOut(ns: string, name: string): Promise<D | undefined> {
  const d = await client.resource<D>(Deployments, ns).get(name);
  const s = d.status;
  const r = d.spec?.replicas ?? 1;
  const ok = (s?.observedGeneration ?? 0) >= (d.metadata.generation ?? 0) && s?.updatedReplicas === r && s?.replicas === r && s?.availableReplicas === r
    && s.conditions?.some((c) => c.type === 'Progressing' && c.reason === 'NewReplicaSetAvailable');
  return ok ? d : undefined;
}

describe('controller-manager against the apiserver', () => {
  test('serves healthz, readyz and per-controller metrics', async () => {
    const port = await cm.healthPort;
    assert.equal((await fetch(`http://127.0.0.1:${port}/healthz`)).status, 200);
    assert.equal((await fetch(`http://127.0.0.1:${port}/readyz`)).status, 200);
    await waitFor('metrics', async () => {
      const m = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      return /workqueue_depth\{name="replicaset"/.test(m) && m;
    });
  });

  test('a ReplicaSet scales up and down; pods carry the controller reference', () => scenario('rs', async (ns) => {
    const rss = client.resource<RS>(ReplicaSets, ns);
    const rs = await rss.create({ apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'web' }, spec: { replicas: 3, selector: { matchLabels: { app: 'web' } }, template: template('web', 'busybox') } } as RS);
    await waitFor('3 ready replicas', async () => (await rss.get('web')).status?.readyReplicas === 3);
    const ps = await livePods(ns);
    assert.equal(ps.length, 3);
    for (const p of ps) {
      assert.equal(p.metadata.ownerReferences?.[0]?.uid, rs.metadata.uid);
      assert.match(p.metadata.name, /^web-[a-z0-9]{5}$/);
    }
    await rss.patch('web', 'merge', { spec: { replicas: 1 } });
    await waitFor('1 replica', async () => (await livePods(ns)).length === 1 && (await rss.get('web')).status?.replicas === 1);
    await rss.patch('web', 'merge', { spec: { replicas: 4 } });
    await waitFor('4 available', async () => (await rss.get('web')).status?.availableReplicas === 4);
    assert.equal((await livePods(ns)).length, 4);
    const s = (await rss.get('web')).status!;
    assert.deepEqual([s.replicas, s.fullyLabeledReplicas, s.readyReplicas, s.observedGeneration], [4, 4, 4, 3]);
    const events = await waitFor('events', async () => {
      const evs = (await client.resource<Obj<Event>>(Events, ns).list()).items.filter((e) => e.involvedObject.name === 'web' && e.involvedObject.kind === 'ReplicaSet');
      return evs.some((e) => e.reason === 'SuccessfulCreate') && evs.some((e) => e.reason === 'SuccessfulDelete') && evs;
    });
    const created = events.find((e) => e.reason === 'SuccessfulCreate')!;
    assert.match(created.message ?? '', /^Created pod: web-[a-z0-9]{5}$/);
    assert.equal(created.source?.component, 'replicaset-controller');
  }));

  test('adoption of matching orphans and release of relabelled pods', () => scenario('adopt', async (ns) => {
    for (const n of ['a', 'b']) {
      await pods(ns).create({ apiVersion: 'v1', kind: 'Pod', metadata: { name: `orphan-${n}`, labels: { app: 'web' } }, spec: template('web', 'x').spec } as PodObj);
    }
    const rss = client.resource<RS>(ReplicaSets, ns);
    const rs = await rss.create({ apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'web' }, spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template: template('web', 'x') } } as RS);
    await waitFor('adopted', async () => (await livePods(ns)).every((p) => p.metadata.ownerReferences?.[0]?.uid === rs.metadata.uid) && (await rss.get('web')).status?.replicas === 2);
    assert.deepEqual((await livePods(ns)).map((p) => p.metadata.name).sort(), ['orphan-a', 'orphan-b'], 'no pod created');
    await pods(ns).patch('orphan-a', 'merge', { metadata: { labels: { app: 'debug' } } });
    await waitFor('released and replaced', async () => {
      const ps = await livePods(ns);
      const a = ps.find((p) => p.metadata.name === 'orphan-a');
      return a && !(a.metadata.ownerReferences ?? []).length && ps.filter((p) => p.metadata.labels?.['app'] === 'web').length === 2;
    });
  }));

  test('a rolling update stays within maxSurge and maxUnavailable at every watch event; rollback and pause work', () => scenario('roll', async (ns) => {
    const ds = client.resource<D>(Deployments, ns);
    const REPLICAS = 4, SURGE = 1, UNAVAIL = 1;
    await ds.create(deployment('web', REPLICAS, 'v1', { revisionHistoryLimit: 5 }));
    await waitFor('first rollout', () => rolledOut(ns, 'web'));

    // Watch every pod event from here on and check the bounds.
    const state = new Map<string, PodObj>();
    for (const p of (await pods(ns).list()).items) state.set(p.metadata.name, p);
    const violations: string[] = [];
    let events = 0;
    const watchAc = new AbortController();
    const rv = (await pods(ns).list()).metadata.resourceVersion;
    // ReplicaSets watched too, so that a violation says what the controllers saw at that moment.
    const rsState = new Map<string, RS>();
    const timeline: string[] = [];
    const watchingRS = (async () => {
      for await (const ev of client.resource<RS>(ReplicaSets, ns).watch({ resourceVersion: rv ?? '0', signal: watchAc.signal })) {
        if (ev.type === 'BOOKMARK' || ev.type === 'ERROR') continue;
        rsState.set(ev.object.metadata.name, ev.object);
        timeline.push(`RS ${ev.type} ${ev.object.metadata.name} ${ev.object.spec?.replicas}/${ev.object.status?.replicas}`);
      }
    })().catch(() => undefined);
    const watchingD = (async () => {
      for await (const ev of client.resource<D>(Deployments, ns).watch({ resourceVersion: rv ?? '0', signal: watchAc.signal })) {
        if (ev.type === 'BOOKMARK' || ev.type === 'ERROR') continue;
        timeline.push(`D ${ev.type} gen ${ev.object.metadata.generation} observed ${ev.object.status?.observedGeneration} image ${ev.object.spec?.template?.spec?.containers[0]?.image}`);
      }
    })().catch(() => undefined);
    const watching = (async () => {
      for await (const ev of pods(ns).watch({ resourceVersion: rv ?? '0', signal: watchAc.signal })) {
        if (ev.type === 'BOOKMARK' || ev.type === 'ERROR') continue;
        timeline.push(`pod ${ev.type} ${ev.object.metadata.name}${ev.object.metadata.deletionTimestamp ? ' (deleting)' : ''}`);
        events++;
        if (ev.type === 'DELETED') state.delete(ev.object.metadata.name); else state.set(ev.object.metadata.name, ev.object);
        const live = [...state.values()].filter((p) => !p.metadata.deletionTimestamp);
        const available = live.filter(isReady).length;
        if (live.length > REPLICAS + SURGE) violations.push(`${live.length} pods after ${ev.type} ${ev.object.metadata.name}: ${live.map((p) => p.metadata.name).join(' ')}; ReplicaSets ${[...rsState.values()].map((r) => `${r.metadata.name} spec ${r.spec?.replicas} status ${r.status?.replicas}`).join(', ')}; timeline ${timeline.slice(-40).join(' | ')}`);
        if (available < REPLICAS - UNAVAIL) violations.push(`${available} available after ${ev.type} ${ev.object.metadata.name}`);
      }
    })().catch(() => undefined);

    await ds.patch('web', 'merge', { spec: { template: { spec: { containers: [{ name: 'c', image: 'v2', ports: [{ name: 'http', containerPort: 8080 }] }] } } } });
    const v2 = await waitFor('rollout to v2', () => rolledOut(ns, 'web'));
    await waitFor('ScalingReplicaSet events', async () => (await client.resource<Obj<Event>>(Events, ns).list()).items
      .some((e) => e.reason === 'ScalingReplicaSet' && /^Scaled down replica set web-\w+ from \d+ to \d+$/.test(e.message ?? '')));
    assert.equal(v2.metadata.annotations?.['deployment.kubernetes.io/revision'], '2');
    await waitFor('old pods gone', async () => (await livePods(ns)).every((p) => p.spec?.containers[0]?.image === 'v2') && (await livePods(ns)).length === REPLICAS);
    watchAc.abort();
    await watching;
    await watchingRS;
    await watchingD;
    assert.ok(events > 8, `saw ${events} pod events`);
    if (violations.length) {
      const scaling = (await client.resource<Obj<Event>>(Events, ns).list()).items.filter((e) => e.reason === 'ScalingReplicaSet')
        .map((e) => `${e.source?.component ?? e.reportingComponent}: ${e.message} x${e.count ?? 1}`);
      violations.push(`ScalingReplicaSet events: ${scaling.join(' | ')}`);
    }
    assert.deepEqual(violations, []);

    // Rollback as `kubectl rollout undo` does: the template of revision 1, written back.
    const rss = (await client.resource<RS>(ReplicaSets, ns).list()).items;
    const rev1 = rss.find((rs) => rs.metadata.annotations?.['deployment.kubernetes.io/revision'] === '1')!;
    assert.ok(rev1, 'revision 1 kept');
    const tpl = structuredClone(rev1.spec!.template!);
    delete tpl.metadata!.labels!['pod-template-hash'];
    await ds.patch('web', 'json', [{ op: 'replace', path: '/spec/template', value: tpl }]);
    await waitFor('rolled back', async () => (await rolledOut(ns, 'web')) && (await livePods(ns)).every((p) => p.spec?.containers[0]?.image === 'v1') && (await livePods(ns)).length === REPLICAS);
    const reused = await client.resource<RS>(ReplicaSets, ns).get(rev1.metadata.name);
    assert.equal(reused.metadata.annotations?.['deployment.kubernetes.io/revision'], '3');
    assert.equal(reused.metadata.annotations?.['deployment.kubernetes.io/revision-history'], '1');
    assert.equal((await client.resource<RS>(ReplicaSets, ns).list()).items.length, 2, 'no new ReplicaSet for a rollback');

    // Pause: template changes wait; resume rolls them out.
    await ds.patch('web', 'merge', { spec: { paused: true } });
    await ds.patch('web', 'merge', { spec: { template: { spec: { containers: [{ name: 'c', image: 'v3', ports: [{ name: 'http', containerPort: 8080 }] }] } } } });
    const paused = await waitFor('paused condition', async () => {
      const d = await ds.get('web');
      return (d.status?.observedGeneration ?? 0) >= (d.metadata.generation ?? 0) && d.status?.conditions?.some((c) => c.type === 'Progressing' && c.reason === 'DeploymentPaused') && d;
    });
    assert.ok(paused);
    assert.equal((await client.resource<RS>(ReplicaSets, ns).list()).items.length, 2, 'no rollout while paused');
    await ds.patch('web', 'merge', { spec: { paused: false } });
    await waitFor('rollout after resume', async () => (await rolledOut(ns, 'web')) && (await livePods(ns)).every((p) => p.spec?.containers[0]?.image === 'v3') && (await livePods(ns)).length === REPLICAS);

    // Scale through the scale subresource: the new ReplicaSet follows.
    await ds.patch('web', 'merge', { spec: { replicas: 6 } }, { subresource: 'scale' });
    await waitFor('scaled to 6', async () => (await rolledOut(ns, 'web')) && (await livePods(ns)).length === 6);
  }));

  test('Recreate stops every old pod before starting new ones', () => scenario('recreate', async (ns) => {
    const ds = client.resource<D>(Deployments, ns);
    await ds.create(deployment('web', 2, 'v1', { strategy: { type: 'Recreate' } }));
    await waitFor('first rollout', () => rolledOut(ns, 'web'));
    await ds.patch('web', 'merge', { spec: { template: { spec: { containers: [{ name: 'c', image: 'v2' }] } } } });
    await waitFor('recreated', async () => (await rolledOut(ns, 'web')) && (await livePods(ns)).every((p) => p.spec?.containers[0]?.image === 'v2') && (await livePods(ns)).length === 2);
  }));

  test('garbage collection: background, foreground and orphan propagation', () => scenario('gc', async (ns) => {
    const ds = client.resource<D>(Deployments, ns);
    const rss = client.resource<RS>(ReplicaSets, ns);
    // background (the default): deleting a Deployment removes its ReplicaSets and pods
    await ds.create(deployment('bg', 2, 'v1'));
    await waitFor('bg rolled out', () => rolledOut(ns, 'bg'));
    await ds.delete('bg');
    await waitFor('bg dependents gone', async () => (await rss.list()).items.length === 0 && (await livePods(ns)).length === 0);

    // foreground: the owner waits (foregroundDeletion finalizer) until its dependents are gone
    await ds.create(deployment('fg', 2, 'v1'));
    await waitFor('fg rolled out', () => rolledOut(ns, 'fg'));
    await ds.delete('fg', { propagationPolicy: 'Foreground' });
    const marked = await ds.get('fg').catch(() => undefined);
    if (marked) assert.ok(marked.metadata.finalizers?.includes('foregroundDeletion'));
    await waitFor('fg all gone', async () => (await ds.get('fg').then(() => false, () => true)) && (await rss.list()).items.length === 0 && (await pods(ns).list()).items.length === 0);

    // orphan: the ReplicaSet goes, its pods stay without an owner
    const rs = await rss.create({ apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'orph' }, spec: { replicas: 2, selector: { matchLabels: { app: 'orph' } }, template: template('orph', 'x') } } as RS);
    await waitFor('orph pods', async () => (await livePods(ns)).length === 2);
    await rss.delete('orph', { propagationPolicy: 'Orphan' });
    await waitFor('orphaned', async () => (await rss.get('orph').then(() => false, () => true)) && (await livePods(ns)).every((p) => !(p.metadata.ownerReferences ?? []).some((r) => r.uid === rs.metadata.uid)));
    assert.equal((await livePods(ns)).length, 2);
  }));

  test('deleting a namespace deletes everything in it, then the namespace', async () => {
    const ns = `nsdel-${++seq}`;
    await createNamespace(client, ns);
    await client.resource<D>(Deployments, ns).create(deployment('web', 2, 'v1'));
    await client.resource<Obj<ConfigMap>>(ConfigMaps, ns).create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cfg' }, data: { a: 'b' } } as Obj<ConfigMap>);
    await waitFor('pods', async () => (await pods(ns).list()).items.length === 2);
    await client.resource(Namespaces).delete(ns);
    const terminating = await client.resource(Namespaces).get(ns).catch(() => undefined);
    if (terminating) assert.equal((terminating['status'] as { phase?: string }).phase, 'Terminating');
    await waitFor('namespace gone', async () => client.resource(Namespaces).get(ns).then(() => false, () => true));
  });

  test('Endpoints and EndpointSlices follow pod readiness, with named ports resolved per pod', () => scenario('ep', async (ns, sim) => {
    await client.resource<Obj<Service>>(Services, ns).create({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' }, spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }] } } as Obj<Service>);
    await client.resource<RS>(ReplicaSets, ns).create({ apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'web' }, spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template: template('web', 'x') } } as RS);
    const eps = client.resource<Obj<Endpoints>>(EndpointsResource, ns);
    const ep = await waitFor('2 ready addresses', async () => { const e = await eps.get('web'); return (e.subsets?.[0]?.addresses?.length ?? 0) === 2 && e; });
    assert.deepEqual(ep.subsets?.[0]?.ports, [{ name: 'http', port: 8080, protocol: 'TCP' }]);
    const [first] = await livePods(ns);
    await sim.setReady(first!.metadata.name, false);
    await waitFor('not ready address', async () => {
      const e = await eps.get('web');
      return e.subsets?.some((s) => s.notReadyAddresses?.some((a) => a.targetRef?.name === first!.metadata.name)) && (e.subsets ?? []).flatMap((s) => s.addresses ?? []).length === 1;
    });
    const slices = client.resource<Obj<EndpointSlice>>(EndpointSlices, ns);
    await waitFor('slice condition', async () => {
      const items = (await slices.list({ labelSelector: 'kubernetes.io/service-name=web' })).items;
      const all = items.flatMap((s) => s.endpoints ?? []);
      return items.length === 1 && all.length === 2 && all.find((e) => e.targetRef?.name === first!.metadata.name)?.conditions?.ready === false;
    });
    await sim.setReady(first!.metadata.name, true);
    await waitFor('ready again', async () => ((await eps.get('web')).subsets?.[0]?.addresses?.length ?? 0) === 2);
  }));

  test('node IPAM gives every node its own /24', async () => {
    const names = ['ipam-a', 'ipam-b', 'ipam-c'];
    for (const n of names) stops.push((await startNode(client, n)).stop);
    const cidrs = await waitFor('podCIDRs', async () => {
      const got = await Promise.all(names.map(async (n) => (await client.resource<Obj<Node>>(Nodes).get(n)).spec?.podCIDR));
      return got.every(Boolean) && got;
    });
    assert.equal(new Set(cidrs).size, 3);
    for (const c of cidrs) assert.match(c!, /^10\.244\.\d+\.0\/24$/);
  });

  test('a node whose Lease stops is marked Unknown, tainted, and its pods evicted and replaced', async () => {
    const healthy = await startNode(client, 'life-ok');
    const doomed = await startNode(client, 'life-dead');
    stops.push(healthy.stop, doomed.stop);
    let dead = false;
    await scenario('life', async (ns) => {
      const rss = client.resource<RS>(ReplicaSets, ns);
      const tpl = template('web', 'x');
      await rss.create({ apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'web' }, spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template: { ...tpl, spec: { ...tpl.spec, terminationGracePeriodSeconds: 30 } } } } as RS);
      await waitFor('2 ready', async () => (await rss.get('web')).status?.readyReplicas === 2);
      const before = await livePods(ns);
      const onDead = before.filter((p) => p.spec?.nodeName === 'life-dead');
      assert.equal(onDead.length, 1);
      doomed.stop();
      dead = true;
      const nodes = client.resource<Obj<Node>>(Nodes);
      await waitFor('Ready Unknown', async () => (await nodes.get('life-dead')).status?.conditions?.find((c) => c.type === 'Ready')?.status === 'Unknown', 30_000);
      await waitFor('tainted', async () => (await nodes.get('life-dead')).spec?.taints?.some((t) => t.key === 'node.kubernetes.io/unreachable' && t.effect === 'NoExecute'));
      assert.equal((await nodes.get('life-ok')).status?.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
      await waitFor('evicted', async () => {
        const p = await pods(ns).get(onDead[0]!.metadata.name).catch(() => undefined);
        return !p || !!p.metadata.deletionTimestamp;
      }, 20_000);
      await waitFor('replaced on the healthy node', async () => {
        const live = await livePods(ns);
        return live.length === 2 && live.every((p) => p.spec?.nodeName === 'life-ok' && isReady(p));
      });
    }, { bindTo: () => (dead ? ['life-ok'] : ['life-ok', 'life-dead']), ignoreNodes: () => (dead ? ['life-dead'] : []) });
  });
});
