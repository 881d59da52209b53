/**
 * Server-side apply conflicts with the real kubectl on real etcd: two field managers applying
 * different values for one field conflict (409, upstream's message), `--force-conflicts` moves the
 * field to the forcing manager.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestApiServer, type TestApiServer, kubectlRunner } from '../../testing/index.js';

describe('kubectl apply --server-side conflicts', () => {
  let srv: TestApiServer;
  let dir: string;
  before(async () => {
    srv = await startTestApiServer({ etcdMembers: 1 });
    dir = await mkdtemp(join(tmpdir(), 'mk8s-ssa-'));
  });
  after(async () => {
    await srv?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const { kubectl, ok } = kubectlRunner({ kubeconfig: () => srv.kubeconfigPath, cacheDir: () => join(dir, 'cache') });
  const manifest = async (name: string, data: Record<string, string>) => {
    const file = join(dir, `${name}.yaml`);
    await writeFile(file, `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared\ndata:\n${Object.entries(data).map(([k, v]) => `  ${k}: "${v}"\n`).join('')}`);
    return file;
  };
  const owners = async () => {
    const cm = JSON.parse(await ok('get', 'configmap', 'shared', '-o', 'json', '--show-managed-fields')) as
      { data: Record<string, string>; metadata: { managedFields: { manager: string; operation: string; fieldsV1: unknown }[] } };
    return { data: cm.data, managers: Object.fromEntries(cm.metadata.managedFields.map((m) => [`${m.manager}/${m.operation}`, m.fieldsV1])) };
  };

  test('a second manager conflicts, --force-conflicts takes the field over', async () => {
    assert.match(await ok('apply', '--server-side', '--field-manager=team-a', '-f', await manifest('a', { color: 'red', size: 'L' })), /configmap\/shared serverside-applied/);

    const b = await manifest('b', { color: 'blue' });
    const conflict = await kubectl('apply', '--server-side', '--field-manager=team-b', '-f', b);
    assert.notEqual(conflict.code, 0);
    assert.match(conflict.stderr, /Apply failed with 1 conflict: conflict with "team-a": \.data\.color/);
    assert.deepEqual((await owners()).data, { color: 'red', size: 'L' });

    // The same value is no conflict: the field becomes shared.
    await ok('apply', '--server-side', '--field-manager=team-c', '-f', await manifest('c', { size: 'L' }));

    assert.match(await ok('apply', '--server-side', '--field-manager=team-b', '--force-conflicts', '-f', b), /configmap\/shared serverside-applied/);
    assert.deepEqual(await owners(), {
      data: { color: 'blue', size: 'L' },
      managers: {
        'team-a/Apply': { 'f:data': { 'f:size': {} } },
        'team-c/Apply': { 'f:data': { 'f:size': {} } },
        'team-b/Apply': { 'f:data': { 'f:color': {} } },
      },
    });

    // Now team-a is the one in conflict.
    const back = await kubectl('apply', '--server-side', '--field-manager=team-a', '-f', await manifest('a', { color: 'red', size: 'L' }));
    assert.match(back.stderr, /Apply failed with 1 conflict: conflict with "team-b": \.data\.color/);
  });

  test('two managers own different containers of one Deployment', async () => {
    const file = join(dir, 'deploy.yaml');
    const deploy = (containers: string) => `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n${containers}`;
    await writeFile(file, deploy('      - name: app\n        image: nginx:1.25\n'));
    await ok('apply', '--server-side', '--field-manager=app-team', '-f', file);
    await writeFile(file, `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n      - name: log\n        image: busybox:1.36\n`);
    await ok('apply', '--server-side', '--field-manager=log-team', '-f', file);
    const images = async () => (await ok('get', 'deploy', 'web', '-o', 'jsonpath={range .spec.template.spec.containers[*]}{.name}={.image} {end}')).trim().split(' ').sort();
    assert.deepEqual(await images(), ['app=nginx:1.25', 'log=busybox:1.36']);
    await writeFile(file, deploy('      - name: app\n        image: nginx:1.26\n'));
    await ok('apply', '--server-side', '--field-manager=app-team', '-f', file);
    assert.deepEqual(await images(), ['app=nginx:1.26', 'log=busybox:1.36']);
    await writeFile(file, deploy('      - name: log\n        image: busybox:1.37\n'));
    const conflict = await kubectl('apply', '--server-side', '--field-manager=app-team', '-f', file);
    assert.match(conflict.stderr, /Apply failed with 1 conflict: conflict with "log-team": \.spec\.template\.spec\.containers\[name="log"\]\.image/);
  });

  test('a kubectl patch takes the field over; the next apply conflicts with the Update manager', async () => {
    const file = join(dir, 'owned.yaml');
    const cm = (v: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: owned\ndata:\n  level: "${v}"\n  keep: "k"\n`;
    await writeFile(file, cm('1'));
    await ok('apply', '--server-side', '--field-manager=ci', '-f', file);
    await ok('patch', 'configmap', 'owned', '--type=merge', '-p', '{"data":{"level":"2"}}');
    const r = await kubectl('apply', '--server-side', '--field-manager=ci', '-f', file);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /Apply failed with 1 conflict: conflict with "kubectl-patch" using v1 at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ: \.data\.level/);
    await ok('apply', '--server-side', '--field-manager=ci', '--force-conflicts', '-f', file);
    assert.equal(await ok('get', 'configmap', 'owned', '-o', 'jsonpath={.data.level}'), '1');
  });

  test('the first apply over an object made by kubectl create conflicts with "kubectl-create", its recorded manager', async () => {
    await ok('create', 'configmap', 'pre', '--from-literal=level=1'); // a protobuf create
    const file = join(dir, 'pre.yaml');
    await writeFile(file, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: pre\ndata:\n  level: "2"\n');
    const r = await kubectl('apply', '--server-side', '-f', file);
    assert.match(r.stderr, /Apply failed with 1 conflict: conflict with "kubectl-create" using v1 at [0-9TZ:-]+: \.data\.level/);
    await writeFile(file, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: pre\ndata:\n  level: "1"\n  extra: "x"\n');
    await ok('apply', '--server-side', '-f', file);
    assert.equal(await ok('get', 'configmap', 'pre', '-o', 'jsonpath={.data.level} {.data.extra}'), '1 x');
  });

  test('kubectl apply, then apply --server-side, then diff --server-side, as on a real cluster', async () => {
    const file = join(dir, 'csa.yaml');
    const cm = (v: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: csa\n  labels: {app: csa}\ndata:\n  level: "${v}"\n  keep: "k"\n`;
    await writeFile(file, cm('1'));
    assert.match(await ok('apply', '-f', file), /configmap\/csa created/);
    // Client-side apply recorded its manager on create; the server-side apply takes over (upstream lastAppliedManager).
    await writeFile(file, cm('2'));
    assert.match(await ok('apply', '--server-side', '-f', file), /configmap\/csa serverside-applied/);
    assert.equal(await ok('get', 'configmap', 'csa', '-o', 'jsonpath={.data.level}'), '2');
    const diff = await kubectl('diff', '--server-side', '-f', file);
    assert.equal(diff.code, 0, `diff --server-side found differences: ${diff.stdout}${diff.stderr}`);
    assert.equal(diff.stdout, '');
    // A real change shows as a diff (exit 1).
    await writeFile(file, cm('3'));
    const changed = await kubectl('diff', '--server-side', '-f', file);
    assert.equal(changed.code, 1, changed.stderr);
    assert.match(changed.stdout, /-  level: "2"\n\+  level: "3"/);
    const { managers } = await (async () => {
      const o = JSON.parse(await ok('get', 'configmap', 'csa', '-o', 'json', '--show-managed-fields')) as { metadata: { managedFields: { manager: string; operation: string }[] } };
      return { managers: o.metadata.managedFields.map((m) => `${m.manager}/${m.operation}`) };
    })();
    // kubectl itself upgrades the client-side Update entry to an Apply entry (csaupgrade) before applying.
    assert.deepEqual(managers.sort(), ['kubectl-last-applied/Apply', 'kubectl/Apply']);
  });
});
