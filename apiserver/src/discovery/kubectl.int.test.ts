/**
 * The real kubectl 1.32 against the real apiserver over a real (one-member) etcd: the wire surface
 * discovery, OpenAPI and Table printing give kubectl. Each kubectl run gets a fresh --cache-dir,
 * so nothing is served from a stale discovery or OpenAPI cache.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestApiServer, type TestApiServer } from '../testing/index.js';

let dir = '';
let kubeconfig = '';
let server: TestApiServer | undefined;

interface Run { code: number; stdout: string; stderr: string }

/** Runs kubectl asynchronously (the apiserver lives in this process) with a fresh cache dir. */
function kubectl(...args: string[]): Promise<Run> {
  return kubectlWithCache(mkdtempSync(join(dir, 'cache-')), ...args);
}

function kubectlWithCache(cache: string, ...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile('kubectl', ['--kubeconfig', kubeconfig, '--cache-dir', cache, ...args], { timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

const ok = (r: Run): string => { assert.equal(r.code, 0, `kubectl failed:\n${r.stderr}\n${r.stdout}`); return r.stdout; };
const file = (name: string, body: unknown): string => { const p = join(dir, name); writeFileSync(p, JSON.stringify(body)); return p; };
const deployment = (image: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', labels: { app: 'web' } },
  spec: {
    replicas: 2, selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'nginx', image, ports: [{ containerPort: 80 }], ...extra }] } },
  },
});

describe('kubectl against discovery, OpenAPI and Table printing', () => {
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mk8s-kubectl-'));
    server = await startTestApiServer({ etcdMembers: 1 });
    kubeconfig = server.kubeconfigPath;
  });
  after(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('version: the server reports 1.32', async () => {
    const v = JSON.parse(ok(await kubectl('version', '-o', 'json')));
    assert.equal(v.serverVersion.major, '1');
    assert.equal(v.serverVersion.minor, '32');
    assert.equal(v.serverVersion.gitVersion, 'v1.32.0-mk8s');
  });

  test('api-resources lists short names, groups, scope and kinds', async () => {
    const out = ok(await kubectl('api-resources', '--no-headers'));
    const rows = out.trim().split('\n').map((l) => l.trim().split(/\s+/));
    const find = (name: string) => rows.find((r) => r[0] === name);
    assert.deepEqual(find('pods'), ['pods', 'po', 'v1', 'true', 'Pod']);
    assert.deepEqual(find('deployments'), ['deployments', 'deploy', 'apps/v1', 'true', 'Deployment']);
    assert.deepEqual(find('nodes'), ['nodes', 'no', 'v1', 'false', 'Node']);
    assert.deepEqual(find('leases'), ['leases', 'coordination.k8s.io/v1', 'true', 'Lease']);
    assert.deepEqual(find('statefulsets'), ['statefulsets', 'sts', 'apps/v1', 'true', 'StatefulSet']);
    assert.deepEqual(find('poddisruptionbudgets'), ['poddisruptionbudgets', 'pdb', 'policy/v1', 'true', 'PodDisruptionBudget']);
    const all = ok(await kubectl('api-resources', '--categories=all', '-o', 'name')).trim().split('\n');
    for (const r of ['pods', 'replicationcontrollers', 'services', 'daemonsets.apps', 'deployments.apps', 'replicasets.apps', 'statefulsets.apps', 'cronjobs.batch', 'jobs.batch']) assert.ok(all.includes(r), r);
  });

  test('create -f with default (strict) validation, and unknown fields are refused', async () => {
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p1', labels: { app: 'x' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } };
    assert.match(ok(await kubectl('create', '-f', file('pod.json', pod))), /pod\/p1 created/);
    const bad = { ...pod, metadata: { name: 'p2' }, spec: { ...pod.spec, foo: 1 } };
    const r = await kubectl('create', '-f', file('bad.json', bad));
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /unknown field "spec\.foo"/);
  });

  test('get pods -o wide prints the upstream columns', async () => {
    const out = ok(await kubectl('get', 'pods', '-o', 'wide'));
    const [header, row] = out.split('\n');
    assert.deepEqual(header!.split(/\s{2,}/), ['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE', 'IP', 'NODE', 'NOMINATED NODE', 'READINESS GATES']);
    assert.match(row!, /^p1\s+0\/1\s+Pending\s+0\s+\d+s\s+<none>\s+<none>\s+<none>\s+<none>\s*$/);
    const labels = ok(await kubectl('get', 'pods', '-A', '--show-labels'));
    assert.match(labels, /^NAMESPACE\s+NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\s+LABELS/);
    assert.match(labels, /default\s+p1\s+.*app=x/);
    const sorted = ok(await kubectl('get', 'pods', '--sort-by=.metadata.name', '-o', 'name'));
    assert.equal(sorted.trim(), 'pod/p1');
  });

  test('apply twice: created, then configured with a patch computed from our OpenAPI schemas', async () => {
    const r1 = await kubectl('apply', '-f', file('d1.json', deployment('nginx:1.25')));
    assert.match(ok(r1), /deployment.apps\/web created/);
    const r2 = await kubectl('apply', '-f', file('d2.json', deployment('nginx:1.26', { env: [{ name: 'A', value: '1' }] })));
    assert.match(ok(r2), /deployment.apps\/web configured/);
    assert.doesNotMatch(r2.stderr, /error calculating patch/);
    const r3 = await kubectl('apply', '-f', file('d3.json', deployment('nginx:1.26', { env: [{ name: 'A', value: '1' }] })));
    assert.match(ok(r3), /deployment.apps\/web unchanged/);
    const d = JSON.parse(ok(await kubectl('get', 'deploy', 'web', '-o', 'json')));
    assert.equal(d.spec.template.spec.containers[0].image, 'nginx:1.26');
    assert.deepEqual(d.spec.template.spec.containers[0].env, [{ name: 'A', value: '1' }]);
    // Dropping a port and an env var from the manifest removes them: the three-way patch needs the
    // merge keys (env by name, ports by containerPort) from our schemas.
    const r4 = await kubectl('apply', '-f', file('d4.json', { ...deployment('nginx:1.26'), spec: { ...deployment('nginx:1.26').spec,
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'nginx', image: 'nginx:1.26' }, { name: 'side', image: 'busybox' }] } } } }));
    assert.match(ok(r4), /deployment.apps\/web configured/);
    assert.doesNotMatch(r4.stderr, /error calculating patch/);
    const d4 = JSON.parse(ok(await kubectl('get', 'deploy', 'web', '-o', 'json')));
    assert.deepEqual(d4.spec.template.spec.containers.map((c: { name: string }) => c.name), ['nginx', 'side']);
    assert.equal(d4.spec.template.spec.containers[0].env, undefined);
    assert.equal(d4.spec.template.spec.containers[0].ports, undefined);
    const wide = ok(await kubectl('get', 'deploy', '-o', 'wide'));
    assert.match(wide, /^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\s+CONTAINERS\s+IMAGES\s+SELECTOR/);
    assert.match(wide, /web\s+0\/2\s+0\s+0\s+\S+\s+nginx,side\s+nginx:1\.26,busybox\s+app=web/);
  });

  test('every served kind prints its upstream header', async () => {
    const objs = [
      { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-a', labels: { 'node-role.kubernetes.io/control-plane': '' } } },
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'svc' }, spec: { selector: { app: 'web' }, ports: [{ port: 80 }] } },
      { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'svc' }, subsets: [{ addresses: [{ ip: '10.244.0.5' }], ports: [{ port: 80 }] }] },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' }, data: { a: '1' } },
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, type: 'Opaque', data: { a: 'MQ==' } },
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'sa' } },
      { apiVersion: 'v1', kind: 'Event', metadata: { name: 'ev' }, involvedObject: { kind: 'Pod', name: 'p1', namespace: 'default' }, reason: 'Scheduled', message: 'hello', type: 'Normal' },
      { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'l' }, spec: { holderIdentity: 'me' } },
      { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: 'svc-x' }, addressType: 'IPv4', ports: [{ port: 80 }], endpoints: [{ addresses: ['10.244.0.5'] }] },
      { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'high' }, value: 1000 },
    ];
    // A v1 List is validated client-side from /openapi/v2 (protobuf), then item by item by the server.
    ok(await kubectl('create', '-f', file('kinds.json', { apiVersion: 'v1', kind: 'List', items: objs })));
    const badList = { apiVersion: 'v1', kind: 'List', items: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm2' }, dataa: {} }] };
    const bad = await kubectl('create', '-f', file('bad-list.json', badList));
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /unknown field "dataa"/);
    for (const [kind, header, row] of [
      ['nodes', 'NAME STATUS ROLES AGE VERSION', /^node-a\s+Unknown\s+control-plane\s+\d+s/],
      ['services', 'NAME TYPE CLUSTER-IP EXTERNAL-IP PORT(S) AGE', /^svc\s+ClusterIP\s+\S+\s+<none>\s+80\/TCP\s+\d+s/],
      ['endpoints', 'NAME ENDPOINTS AGE', /^svc\s+10\.244\.0\.5:80\s+\d+s/],
      ['configmaps', 'NAME DATA AGE', /^cm\s+1\s+\d+s/],
      ['secrets', 'NAME TYPE DATA AGE', /^s\s+Opaque\s+1\s+\d+s/],
      ['serviceaccounts', 'NAME SECRETS AGE', /^sa\s+0\s+\d+s/],
      ['events', 'LAST SEEN TYPE REASON OBJECT MESSAGE', /Normal\s+Scheduled\s+pod\/p1\s+hello/],
      ['leases', 'NAME HOLDER AGE', /^l\s+me\s+\d+s/],
      ['endpointslices', 'NAME ADDRESSTYPE PORTS ENDPOINTS AGE', /^svc-x\s+IPv4\s+80\s+10\.244\.0\.5\s+\d+s/],
      ['priorityclasses', 'NAME VALUE GLOBAL-DEFAULT AGE PREEMPTIONPOLICY', /^high\s+1000\s+false\s+\d+s/],
      ['namespaces', 'NAME STATUS AGE', /^default\s+Active\s+\d+s/],
    ] as const) {
      const lines = ok(await kubectl('get', kind)).split('\n');
      assert.equal(lines[0]!.trim().split(/\s+/).join(' '), header, kind);
      assert.ok(lines.slice(1).some((l) => row.test(l)), `${kind}:\n${lines.join('\n')}`);
    }
  });

  test('a warm cache (discovery, hashed OpenAPI URLs) keeps working', async () => {
    const cache = mkdtempSync(join(dir, 'warm-'));
    const cm = (name: string) => file(`${name}.json`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: '1' } });
    for (const name of ['warm1', 'warm2']) {
      const r = await kubectlWithCache(cache, 'create', '-f', cm(name));
      assert.match(ok(r), new RegExp(`configmap/${name} created`));
      assert.equal(r.stderr, '');
    }
    assert.match(ok(await kubectlWithCache(cache, 'get', 'cm', 'warm1', 'warm2')), /warm1\s+1\s+\d+s\n.*warm2/s);
  });

  test('get all expands the category', async () => {
    const out = ok(await kubectl('get', 'all'));
    assert.match(out, /pod\/p1/);
    assert.match(out, /deployment.apps\/web/);
  });

  test('explain reads the schemas', async () => {
    const spec = ok(await kubectl('explain', 'pod.spec'));
    assert.match(spec, /KIND:\s+Pod/);
    assert.match(spec, /VERSION:\s+v1/);
    assert.match(spec, /containers\s+<\[\]Container> -required-/);
    const containers = ok(await kubectl('explain', 'pod.spec.containers'));
    assert.match(containers, /FIELD: containers <\[\]Container>/);
    assert.match(containers, /image\s+<string>/);
    const deploy = ok(await kubectl('explain', 'deployment.spec.strategy'));
    assert.match(deploy, /GROUP:\s+apps/);
    assert.match(ok(await kubectl('explain', 'svc.spec.ports.targetPort')), /FIELD: targetPort <IntOrString>/);
    const recursive = ok(await kubectl('explain', 'pod', '--recursive'));
    assert.match(recursive, /containerPort\s+<integer> -required-/);
  });
});
