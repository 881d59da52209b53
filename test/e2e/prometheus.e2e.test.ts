/**
 * Issue 14's Prometheus acceptance: Debian's Prometheus scrapes every component of the running
 * cluster with the credentials the cluster provides (the admin's client certificate and the cluster
 * CA), and every series a Kubernetes dashboard expects is there: the apiserver's request, inflight,
 * storage, etcd and watch families with upstream's labels; rest_client_* on every client;
 * workqueue_* on the controller-manager's and kube-proxy's queues; process_* and nodejs_* on every
 * process; the kubelet's /metrics and /metrics/cadvisor (per-container CPU, memory, pod network).
 * Prometheus runs bound to 127.0.0.1 with a temporary data directory, for as long as the queries
 * take (a deadline, no fixed sleeps); it is stopped and its directory deleted afterwards.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, KUBECONFIG, kubectl, kubectlOk, uniqueName, waitFor } from './lib/cluster.js';

const ns = uniqueName('e2e-prometheus');
const PKI = join(ROOT, '.mk8s', 'pki');
const tls = { ca_file: join(PKI, 'ca.crt'), cert_file: join(PKI, 'admin.crt'), key_file: join(PKI, 'admin.key') };
let dir = '';
let prometheus: ChildProcess | undefined;
let portForward: ChildProcess | undefined;
let promUrl = '';
let nodeIPs: string[] = [];

const freePort = (): Promise<number> => new Promise((resolve, reject) => {
  const s = createServer();
  s.once('error', reject);
  s.listen(0, '127.0.0.1', () => { const a = s.address(); s.close(() => resolve(typeof a === 'object' && a ? a.port : 0)); });
});

const stop = (child: ChildProcess | undefined): Promise<void> => new Promise((resolve) => {
  if (!child || child.exitCode !== null || child.signalCode !== null) return resolve();
  child.once('exit', () => resolve());
  child.kill('SIGTERM');
});

interface Sample { metric: Record<string, string>; value: [number, string] }
async function query(expr: string): Promise<Sample[]> {
  const res = await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(expr)}`);
  const body = await res.json() as { status: string; data?: { result: Sample[] }; error?: string };
  if (body.status !== 'success') throw new Error(`${expr}: ${body.error ?? res.status}`);
  return body.data?.result ?? [];
}

before(async () => {
  nodeIPs = kubectlOk(['get', 'nodes', '-o', 'jsonpath={range .items[*]}{.status.addresses[?(@.type=="InternalIP")].address}{"\\n"}{end}']).split('\n').filter(Boolean);
  assert.ok(nodeIPs.length > 0, 'nodes are registered');
  kubectlOk(['apply', '-f', '-'], { input: `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${ns}}\n` });
  // A pod started while Prometheus looks: kubelet_pod_start_duration_seconds and its cAdvisor series.
  kubectlOk(['-n', ns, 'apply', '-f', '-'], { input: `apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers:
  - {name: app, image: mk8s/testserver:1.0, imagePullPolicy: IfNotPresent}
` });
  await waitFor(() => kubectl(['-n', ns, 'get', 'pod', 'web', '-o', 'jsonpath={.status.phase}']).stdout === 'Running', { timeoutMs: 120_000, what: 'pod web Running' });
  // A watch that ends soon (apiserver_request_total counts a watch when it ends, as upstream).
  kubectlOk(['get', '--raw', '/api/v1/pods?watch=true&timeoutSeconds=1'], { timeoutMs: 30_000 });

  // cluster-dns runs as a pod (pod IPs are not routed to the host): its metrics port through a port-forward.
  const dnsPod = kubectlOk(['-n', 'kube-system', 'get', 'pods', '-l', 'k8s-app=kube-dns', '--field-selector', 'status.phase=Running', '-o', 'jsonpath={.items[0].metadata.name}']).trim();
  assert.ok(dnsPod, 'a cluster DNS pod runs');
  const pf = spawn('kubectl', ['--kubeconfig', KUBECONFIG, '-n', 'kube-system', 'port-forward', `pod/${dnsPod}`, ':9153'], { stdio: ['ignore', 'pipe', 'pipe'] });
  portForward = pf;
  let pfOut = '';
  pf.stdout.on('data', (d: Buffer) => { pfOut += d.toString(); });
  pf.stderr.on('data', (d: Buffer) => { pfOut += d.toString(); });
  const dnsPort = await waitFor(() => /Forwarding from 127\.0\.0\.1:(\d+)/.exec(pfOut)?.[1], { timeoutMs: 30_000, what: `port-forward to ${dnsPod}: ${pfOut}` });

  dir = mkdtempSync(join(tmpdir(), 'mk8s-prometheus-'));
  const job = (name: string, targets: string[], extra: Record<string, unknown> = {}) => ({ job_name: name, static_configs: [{ targets }], ...extra });
  const https = { scheme: 'https', tls_config: tls };
  const config = {
    global: { scrape_interval: '2s', scrape_timeout: '2s' },
    scrape_configs: [
      job('apiserver', ['127.0.0.1:6443'], https),
      job('controller-manager', ['127.0.0.1:10257']),
      job('scheduler', ['127.0.0.1:10259']),
      job('kubelet', nodeIPs.map((ip) => `${ip}:10250`), https),
      job('cadvisor', nodeIPs.map((ip) => `${ip}:10250`), { ...https, metrics_path: '/metrics/cadvisor' }),
      job('kube-proxy', nodeIPs.map((ip) => `${ip}:10256`)),
      job('cri-docker', nodeIPs.map((ip) => `${ip}:10251`)),
      job('cluster-dns', [`127.0.0.1:${dnsPort}`]),
    ],
  };
  // JSON is YAML: Prometheus reads it as its config file.
  writeFileSync(join(dir, 'prometheus.yml'), JSON.stringify(config, null, 2));
  const port = await freePort();
  promUrl = `http://127.0.0.1:${port}`;
  prometheus = spawn('prometheus', [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${port}`, '--storage.tsdb.retention.time=1h', '--log.level=warn'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let promErr = '';
  prometheus.stderr?.on('data', (d: Buffer) => { promErr += d.toString(); });
  await waitFor(async () => (await fetch(`${promUrl}/-/ready`)).ok, { timeoutMs: 60_000, what: `prometheus ready: ${promErr.slice(-2000)}` });
});

after(async () => {
  await stop(prometheus);
  await stop(portForward);
  if (dir) rmSync(dir, { recursive: true, force: true });
  kubectl(['delete', 'namespace', ns, '--wait=false']);
});

const JOBS = ['apiserver', 'controller-manager', 'scheduler', 'kubelet', 'cadvisor', 'kube-proxy', 'cri-docker', 'cluster-dns'];
const PROCESS_JOBS = JOBS.filter((j) => j !== 'cadvisor');
const DEADLINE = { timeoutMs: 120_000, intervalMs: 1000 };

test('every target of every component is up', async () => {
  const want = 3 + 4 * nodeIPs.length + 1;
  await waitFor(async () => (await query('up == 1')).length === want, { ...DEADLINE, what: `${want} targets up` });
  const up = await query('up');
  assert.deepEqual([...new Set(up.map((s) => s.metric['job']))].sort(), [...JOBS].sort());
});

/** Waits until every expression returns a series; on the deadline, names all that never did. */
async function allPresent(exprs: string[]): Promise<void> {
  let missing = exprs;
  const deadline = Date.now() + DEADLINE.timeoutMs;
  for (;;) {
    const found = await Promise.all(missing.map(async (e) => (await query(e)).length > 0));
    missing = missing.filter((_, i) => !found[i]);
    if (missing.length === 0) return;
    if (Date.now() > deadline) assert.fail(`series never present:\n${missing.join('\n')}`);
    await new Promise((r) => setTimeout(r, DEADLINE.intervalMs));
  }
}

/** Waits until expr returns at least one series; returns them. */
const present = (expr: string) => waitFor(async () => { const r = await query(expr); return r.length > 0 ? r : undefined; }, { ...DEADLINE, what: expr });

test('the apiserver: request counts and latencies with upstream labels, inflight, storage objects, etcd latency, watch events', async () => {
  const total = await present('apiserver_request_total{job="apiserver",group="",verb="LIST",resource="pods",component="apiserver"}');
  // Prometheus drops empty labels (group="" of the core group, subresource="", dry_run=""): the others are all there.
  // group="" (absent) picks the core group's pods, not metrics.k8s.io/v1beta1 pods proxied to metrics-server.
  const m = total[0]!.metric;
  assert.deepEqual({ version: m['version'], scope: m['scope'], component: m['component'] }, { version: 'v1', scope: m['scope'] === 'namespace' ? 'namespace' : 'cluster', component: 'apiserver' });
  assert.match(m['code'] ?? '', /^\d{3}$/);
  await allPresent([
    // A watch is counted when it ends (as upstream's): the short one before() ran.
    'apiserver_request_total{job="apiserver",verb="WATCH",resource="pods",scope="cluster",code="200"}',
    'apiserver_request_total{job="apiserver",verb="POST",resource="pods",scope="resource",code="201"}',
    'apiserver_request_total{job="apiserver",group="apps",version="v1",resource="deployments"}',
    'apiserver_request_duration_seconds_bucket{job="apiserver",verb="GET",le="0.005"}',
    'apiserver_current_inflight_requests{job="apiserver",request_kind="readOnly"}',
    'apiserver_current_inflight_requests{job="apiserver",request_kind="mutating"}',
    'apiserver_storage_objects{job="apiserver",resource="pods"} >= 2',
    'apiserver_storage_objects{job="apiserver",resource="deployments.apps"}',
    'etcd_request_duration_seconds_bucket{job="apiserver",operation="create",type="pods"}',
    'apiserver_watch_events_total{job="apiserver",kind="Pod"} > 0',
    'apiserver_longrunning_requests{job="apiserver",verb="WATCH"} > 0',
  ]);
});

test('rest_client_requests_total on every client, workqueue_* on every queue', async () => {
  for (const j of ['controller-manager', 'scheduler', 'kubelet', 'kube-proxy', 'cluster-dns']) {
    await present(`rest_client_requests_total{job="${j}",code="200",method="GET"}`);
    await present(`rest_client_request_duration_seconds_bucket{job="${j}",verb="GET"}`);
  }
  for (const family of ['workqueue_depth', 'workqueue_adds_total', 'workqueue_queue_duration_seconds_bucket', 'workqueue_work_duration_seconds_bucket',
    'workqueue_unfinished_work_seconds', 'workqueue_longest_running_processor_seconds', 'workqueue_retries_total']) {
    await present(`${family}{job="controller-manager",name="replicaset"}`);
  }
  await present('workqueue_adds_total{job="kube-proxy",name="node-routes"} > 0');
});

test('process and Node.js runtime metrics on every process', async () => {
  for (const family of ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'process_start_time_seconds', 'nodejs_heap_size_used_bytes', 'nodejs_eventloop_lag_seconds']) {
    const r = await present(family);
    const jobs = new Set(r.map((s) => s.metric['job']));
    for (const j of PROCESS_JOBS) assert.ok(jobs.has(j), `${family} from ${j}`);
  }
});

test('the kubelet: running pods and containers, pod start duration, PLEG relist duration', async () => {
  const pods = await present('sum(kubelet_running_pods{job="kubelet"}) > 0');
  assert.ok(Number(pods[0]!.value[1]) >= 2);
  await present('kubelet_running_containers{job="kubelet",container_state="running"} > 0');
  await present('sum(kubelet_pod_start_duration_seconds_count{job="kubelet"}) > 0');
  await present('kubelet_pleg_relist_duration_seconds_bucket{job="kubelet",le="+Inf"} > 0');
});

test('/metrics/cadvisor: the test pod\'s CPU, memory and network', async () => {
  const sel = `job="cadvisor",namespace="${ns}",pod="web"`;
  const cpu = await present(`container_cpu_usage_seconds_total{${sel},container="app"}`);
  assert.equal(cpu[0]!.metric['image'], 'mk8s/testserver:1.0');
  await present(`container_memory_working_set_bytes{${sel},container="app"} > 0`);
  await present(`container_network_receive_bytes_total{${sel},interface="eth0"}`);
  await present(`container_network_transmit_bytes_total{${sel},interface="eth0"}`);
});
