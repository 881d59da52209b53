/**
 * HorizontalPodAutoscalers with the real kubectl 1.32 against the apiserver on real etcd:
 * `kubectl autoscale` (an autoscaling/v1 protobuf POST) stores a v2 object, `kubectl get hpa`
 * prints upstream's columns, `-o yaml` reads v2, the v1 view reads the same object, `describe`
 * works, `apply -f` of a v2 manifest with behavior, and upstream's 422 for a bad one.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kubeconfig, startTestApiServer, type TestApiServer, kubectlRunner } from '../../testing/index.js';

describe('horizontalpodautoscalers with kubectl', () => {
  let srv: TestApiServer;
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mk8s-hpa-'));
    srv = await startTestApiServer({ etcdMembers: 1 });
    await writeFile(join(dir, 'kubeconfig'), kubeconfig(srv.url));
  });
  after(async () => {
    await srv?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  const { kubectl, ok } = kubectlRunner({ kubeconfig: () => join(dir, 'kubeconfig'), cacheDir: () => join(dir, 'cache') });

  test('kubectl autoscale creates an HPA that get, get -o yaml (v2), the v1 view and describe show', async () => {
    await ok('create', 'deployment', 'web', '--image=busybox');
    assert.match(await ok('autoscale', 'deployment', 'web', '--cpu-percent=50', '--min=1', '--max=5'), /horizontalpodautoscaler.autoscaling\/web autoscaled/);
    const table = await ok('get', 'hpa');
    assert.match(table, /^NAME\s+REFERENCE\s+TARGETS\s+MINPODS\s+MAXPODS\s+REPLICAS\s+AGE\n/);
    assert.match(table, /\nweb\s+Deployment\/web\s+cpu: <unknown>\/50%\s+1\s+5\s+0\s+\S+\n/);
    const v2 = JSON.parse(await ok('get', 'hpa', 'web', '-o', 'json'));
    assert.equal(v2.apiVersion, 'autoscaling/v2');
    assert.deepEqual(v2.spec.metrics, [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }]);
    const v1 = JSON.parse(await ok('get', 'horizontalpodautoscalers.v1.autoscaling', 'web', '-o', 'json'));
    assert.equal(v1.apiVersion, 'autoscaling/v1');
    assert.equal(v1.spec.targetCPUUtilizationPercentage, 50);
    const d = await ok('describe', 'hpa', 'web');
    assert.match(d, /Reference:\s+Deployment\/web/);
    assert.match(d, /resource cpu on pods\s+\(as a percentage of request\):\s+<unknown> \/ 50%/);
    assert.match(d, /Min replicas:\s+1/);
    assert.match(d, /Max replicas:\s+5/);
  });

  test('kubectl apply of a v2 manifest with behavior and memory; a bad one is upstream\'s 422', async () => {
    const manifest = (name: string, spec: Record<string, unknown>) => JSON.stringify({
      apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name },
      spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, maxReplicas: 4, ...spec },
    });
    const f = join(dir, 'mem.json');
    await writeFile(f, manifest('mem', { metrics: [{ type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '200Mi' } } }], behavior: { scaleDown: { stabilizationWindowSeconds: 15 } } }));
    await ok('apply', '-f', f);
    const got = JSON.parse(await ok('get', 'hpa', 'mem', '-o', 'json'));
    assert.equal(got.spec.behavior.scaleDown.stabilizationWindowSeconds, 15);
    assert.equal(got.spec.behavior.scaleUp.policies.length, 2);
    assert.match(await ok('get', 'hpa', 'mem'), /memory: <unknown>\/200Mi/);
    await writeFile(f, manifest('bad', { minReplicas: 3, maxReplicas: 2 }));
    const bad = await kubectl('apply', '-f', f);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /The HorizontalPodAutoscaler "bad" is invalid: spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`/);
  });
});
