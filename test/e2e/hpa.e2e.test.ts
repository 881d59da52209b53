/**
 * HorizontalPodAutoscalers on the real cluster with the real kubectl (issue 20): `kubectl autoscale`
 * (autoscaling/v1, protobuf) makes an HPA that `kubectl get hpa` prints with upstream's columns and
 * `describe` explains. A target whose pods request no CPU cannot be scaled on CPU utilization: the
 * controller reports ScalingActive False FailedGetResourceMetric (condition and Warning event) and never
 * touches it. With metrics.k8s.io served (metrics-server, which cluster up starts: its absence fails the
 * test), a CPU-bound Deployment at 50 % scales up within 2 minutes and, its load stopped, back down
 * after a short scale-down window. One namespace, deleted afterwards.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { kubectl, kubectlOk, uniqueName, waitFor } from './lib/cluster.js';

const ns = uniqueName('e2e-hpa');
const k = (args: string[], input?: string) => kubectlOk(['-n', ns, ...args], input === undefined ? {} : { input });
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const jsonOf = (...args: string[]) => JSON.parse(k([...args, '-o', 'json'])) as Record<string, any>;
/** PodMetrics of this namespace's pods with the label app=burn, as the HPA's metrics client reads them. */
const burnMetrics = (): number => {
  const r = kubectl(['get', '--raw', `/apis/metrics.k8s.io/v1beta1/namespaces/${ns}/pods?labelSelector=app%3Dburn`]);
  if (r.code !== 0) return 0;
  try { return ((JSON.parse(r.stdout) as { items?: unknown[] }).items ?? []).length; } catch { return 0; }
};

// Each pod burns CPU (capped at 200m by its limit, twice its 100m request) until /tmp/stop exists;
// `[` and `:` are ash builtins, so the loop forks nothing.
const burner = `
apiVersion: apps/v1
kind: Deployment
metadata: { name: burn }
spec:
  replicas: 1
  selector: { matchLabels: { app: burn } }
  template:
    metadata: { labels: { app: burn } }
    spec:
      automountServiceAccountToken: false
      terminationGracePeriodSeconds: 0
      containers:
      - name: burn
        image: busybox
        imagePullPolicy: IfNotPresent
        command: [sh, -c, 'while [ ! -e /tmp/stop ]; do :; done; exec sleep 100000']
        resources: { requests: { cpu: 100m, memory: 16Mi }, limits: { cpu: 200m, memory: 64Mi } }
`;

// The same pods without a CPU request: utilization of a request that does not exist is undefined.
const norequest = `
apiVersion: apps/v1
kind: Deployment
metadata: { name: norequest }
spec:
  replicas: 1
  selector: { matchLabels: { app: norequest } }
  template:
    metadata: { labels: { app: norequest } }
    spec:
      automountServiceAccountToken: false
      terminationGracePeriodSeconds: 0
      containers:
      - name: sleep
        image: busybox
        imagePullPolicy: IfNotPresent
        command: [sleep, '100000']
`;

const condition = (type: string, hpa = 'burn') => (jsonOf('get', 'hpa', hpa).status?.conditions ?? []).find((c: { type: string }) => c.type === type);

describe('horizontal pod autoscaling', () => {
  before(() => {
    kubectlOk(['create', 'namespace', ns]);
    k(['apply', '-f', '-'], burner);
  });
  after(() => { kubectl(['delete', 'namespace', ns, '--wait=false']); });

  test('kubectl autoscale, get hpa (upstream columns) and describe hpa', async () => {
    assert.match(k(['autoscale', 'deployment', 'burn', '--cpu-percent=50', '--min=1', '--max=3']), /horizontalpodautoscaler.autoscaling\/burn autoscaled/);
    const table = k(['get', 'hpa']);
    assert.match(table, /^NAME\s+REFERENCE\s+TARGETS\s+MINPODS\s+MAXPODS\s+REPLICAS\s+AGE\n/);
    assert.match(table, /\nburn\s+Deployment\/burn\s+cpu: (<unknown>|\d+%)\/50%\s+1\s+3\s+\d+\s+\S+\n/);
    const hpa = jsonOf('get', 'hpa', 'burn');
    assert.equal(hpa.apiVersion, 'autoscaling/v2');
    assert.deepEqual(hpa.spec.metrics, [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }]);
    // The controller reads the Deployment's scale within a sync period.
    await waitFor(() => condition('AbleToScale')?.status === 'True', { timeoutMs: 60_000, what: 'AbleToScale True' });
    assert.match(k(['describe', 'hpa', 'burn']), /Reference:\s+Deployment\/burn[\s\S]*Min replicas:\s+1[\s\S]*Max replicas:\s+3[\s\S]*Conditions:[\s\S]*AbleToScale\s+True/);
  });

  test('pods without a CPU request: ScalingActive False FailedGetResourceMetric, the Deployment untouched', async () => {
    k(['apply', '-f', '-'], norequest);
    k(['autoscale', 'deployment', 'norequest', '--cpu-percent=50', '--min=1', '--max=3']);
    const active = await waitFor(() => { const c = condition('ScalingActive', 'norequest'); return c?.status === 'False' ? c : undefined; }, { timeoutMs: 90_000, what: 'ScalingActive False' });
    assert.equal(active.reason, 'FailedGetResourceMetric');
    // Before metrics-server has scraped the new pod there are no metrics; after, the request is missing.
    assert.match(active.message, /^the HPA was unable to compute the replica count: failed to get cpu utilization: (unable to get metrics for resource cpu: (unable to fetch metrics from resource metrics API: |no metrics returned from resource metrics API)|missing request for cpu in container sleep of Pod norequest-)/);
    assert.match(k(['get', 'hpa', 'norequest']), /cpu: <unknown>\/50%/);
    const events = k(['get', 'events', '--field-selector', 'involvedObject.kind=HorizontalPodAutoscaler,involvedObject.name=norequest', '-o', 'jsonpath={range .items[*]}{.type} {.reason} {.source.component}{"\\n"}{end}']);
    assert.match(events, /Warning FailedGetResourceMetric horizontal-pod-autoscaler/);
    assert.match(events, /Warning FailedComputeMetricsReplicas horizontal-pod-autoscaler/);
    assert.equal(jsonOf('get', 'deployment', 'norequest').spec.replicas, 1);
    k(['delete', 'deployment', 'norequest', '--wait=false']);
  });

  test('with metrics: scales up within 2 minutes at 50 %, and back down once the load stops', async () => {
    // cluster up starts metrics-server: the burning pod must show up in metrics.k8s.io (15 s scrapes).
    await waitFor(() => burnMetrics() > 0, { timeoutMs: 120_000, intervalMs: 3000, what: 'PodMetrics for app=burn from metrics.k8s.io' });
    k(['patch', 'hpa', 'burn', '--type=merge', '-p', JSON.stringify({ spec: { behavior: { scaleDown: { stabilizationWindowSeconds: 15 } } } })]);
    await waitFor(() => (jsonOf('get', 'deployment', 'burn').spec.replicas as number) > 1, { timeoutMs: 120_000, intervalMs: 2000, what: 'a scale-up' });
    const active = condition('ScalingActive');
    assert.equal(active?.reason, 'ValidMetricFound');
    assert.match(k(['get', 'hpa', 'burn']), /cpu: \d+%\/50%/);
    const events = k(['get', 'events', '--field-selector', 'involvedObject.name=burn,reason=SuccessfulRescale', '-o', 'jsonpath={.items[*].message}']);
    assert.match(events, /New size: [23]; reason: cpu resource utilization \(percentage of request\) above target/);
    // Stop the load in every pod (again for pods a late scale-up adds) until the HPA scales back to 1.
    await waitFor(() => {
      for (const p of k(['get', 'pods', '-l', 'app=burn', '--field-selector', 'status.phase=Running', '-o', 'name']).split('\n').filter(Boolean)) {
        kubectl(['-n', ns, 'exec', p, '--', 'touch', '/tmp/stop']);
      }
      return jsonOf('get', 'deployment', 'burn').spec.replicas === 1;
    }, { timeoutMs: 180_000, intervalMs: 5000, what: 'the scale-down to 1' });
    assert.match(k(['get', 'events', '--field-selector', 'involvedObject.name=burn,reason=SuccessfulRescale', '-o', 'jsonpath={.items[*].message}']), /New size: 1; reason: All metrics below target/);
  });
});
