/**
 * Resource metrics on the real cluster (issue 20): metrics-server scrapes every kubelet's
 * /metrics/resource and serves metrics.k8s.io/v1beta1 through the aggregation layer. The
 * APIService turns Available; `kubectl top nodes` lists every node with non-zero figures; `kubectl
 * top pods -A` shows the DNS pods; the figures move between two scrapes (15 s apart); the raw
 * PodMetricsList has upstream's shape; a user without RBAC is refused and one with `view` (which
 * aggregates system:aggregated-metrics-reader) is not; `mkctl top` prints kubectl's columns.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { KUBECONFIG, ROOT, kubectl, kubectlAsync, kubectlAsyncOk, kubectlOk, uniqueName, waitFor } from './lib/cluster.js';

const APISERVICE = 'v1beta1.metrics.k8s.io';
const ns = uniqueName('e2e-metrics');

interface NodeMetrics { metadata: { name: string; labels?: Record<string, string> }; timestamp: string; window: string; usage: { cpu: string; memory: string } }
interface PodMetrics { metadata: { name: string; namespace: string; labels?: Record<string, string> }; timestamp: string; window: string; containers: { name: string; usage: { cpu: string; memory: string } }[] }

const rows = (out: string) => out.trimEnd().split('\n').map((l) => l.trim().split(/\s+/));
const mkctl = (args: string[]) => spawnSync(process.execPath, ['--conditions=@mk8s/source', '--import', 'tsx', join(ROOT, 'mkctl', 'src', 'main.ts'), '--kubeconfig', KUBECONFIG, ...args], { encoding: 'utf8', timeout: 60_000, cwd: ROOT });
const nodeNames = () => kubectlOk(['get', 'nodes', '-o', 'jsonpath={.items[*].metadata.name}']).trim().split(/\s+/).sort();

describe('metrics-server and kubectl top', () => {
  before(() => { kubectlOk(['create', 'namespace', ns]); });
  after(() => { kubectl(['delete', 'namespace', ns, '--wait=false']); });

  test('the APIService v1beta1.metrics.k8s.io is Available and discovered', async () => {
    await kubectlAsyncOk(['wait', '--for=condition=Available', '--timeout=90s', `apiservice/${APISERVICE}`], { timeoutMs: 100_000 });
    const res = await kubectlAsyncOk(['api-resources', '--api-group=metrics.k8s.io']);
    assert.match(res, /^nodes\s+metrics\.k8s\.io\/v1beta1\s+false\s+NodeMetrics$/m);
    assert.match(res, /^pods\s+metrics\.k8s\.io\/v1beta1\s+true\s+PodMetrics$/m);
  });

  test('kubectl top nodes lists every node with non-zero figures', async () => {
    const want = nodeNames();
    const table = await waitFor(async () => {
      const r = await kubectlAsync(['top', 'nodes']);
      if (r.code !== 0) return undefined;
      const t = rows(r.stdout);
      return t.length - 1 === want.length && t.slice(1).every((c) => c[1] !== '<unknown>') ? t : undefined;
    }, { timeoutMs: 90_000, what: 'kubectl top nodes with every node' });
    assert.deepEqual(table[0], ['NAME', 'CPU(cores)', 'CPU(%)', 'MEMORY(bytes)', 'MEMORY(%)']);
    assert.deepEqual(table.slice(1).map((c) => c[0]).sort(), want);
    for (const [name, cpu, cpuPct, mem, memPct] of table.slice(1)) {
      assert.match(cpu ?? '', /^\d+m$/, `${name} cpu`);
      assert.ok(Number.parseInt(cpu ?? '0', 10) > 0, `${name} uses some CPU: ${cpu}`);
      assert.match(mem ?? '', /^\d+Mi$/, `${name} memory`);
      assert.ok(Number.parseInt(mem ?? '0', 10) > 0, `${name} uses some memory: ${mem}`);
      assert.match(cpuPct ?? '', /^\d+%$/);
      assert.match(memPct ?? '', /^\d+%$/);
    }
  });

  test('kubectl top pods -A shows the DNS pods; --containers names the container', async () => {
    const dns = kubectlOk(['get', 'pods', '-n', 'kube-system', '-l', 'k8s-app=kube-dns', '-o', 'jsonpath={.items[*].metadata.name}']).trim().split(/\s+/).sort();
    assert.ok(dns.length >= 1);
    const table = await waitFor(async () => {
      const r = await kubectlAsync(['top', 'pods', '-A']);
      const t = r.code === 0 ? rows(r.stdout) : [];
      return dns.every((d) => t.some((c) => c[0] === 'kube-system' && c[1] === d)) ? t : undefined;
    }, { timeoutMs: 90_000, what: 'kubectl top pods -A with the DNS pods' });
    assert.deepEqual(table[0], ['NAMESPACE', 'NAME', 'CPU(cores)', 'MEMORY(bytes)']);
    for (const c of table.filter((x) => dns.includes(x[1] ?? ''))) {
      assert.match(c[2] ?? '', /^\d+m$/);
      assert.ok(Number.parseInt(c[3] ?? '0', 10) > 0, `memory of ${c[1]}: ${c[3]}`);
    }
    const containers = rows(await kubectlAsyncOk(['top', 'pods', '-n', 'kube-system', '-l', 'k8s-app=kube-dns', '--containers']));
    assert.deepEqual(containers[0], ['POD', 'NAME', 'CPU(cores)', 'MEMORY(bytes)']);
    assert.ok(containers.slice(1).every((c) => dns.includes(c[0] ?? '') && c[1] === 'coredns'), JSON.stringify(containers));
  });

  test('the raw PodMetricsList and NodeMetrics have upstream\'s shape; figures move between two scrapes', async () => {
    const pods = JSON.parse(await kubectlAsyncOk(['get', '--raw', '/apis/metrics.k8s.io/v1beta1/pods'])) as { kind: string; apiVersion: string; items: PodMetrics[] };
    assert.equal(pods.kind, 'PodMetricsList');
    assert.equal(pods.apiVersion, 'metrics.k8s.io/v1beta1');
    const dns = pods.items.find((p) => p.metadata.namespace === 'kube-system' && p.metadata.labels?.['k8s-app'] === 'kube-dns');
    assert.ok(dns, 'a DNS pod, with its labels');
    assert.match(dns.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.match(dns.window, /^\d+(\.\d+)?s$/);
    for (const c of dns.containers) {
      assert.match(c.usage.cpu, /^\d+[num]?$/);
      assert.match(c.usage.memory, /^\d+(Ki|Mi|Gi)?$/);
    }
    const read = async () => JSON.parse(await kubectlAsyncOk(['get', '--raw', '/apis/metrics.k8s.io/v1beta1/nodes'])) as { kind: string; items: NodeMetrics[] };
    const first = await read();
    assert.equal(first.kind, 'NodeMetricsList');
    const name = first.items[0]!.metadata.name;
    const one = JSON.parse(await kubectlAsyncOk(['get', '--raw', `/apis/metrics.k8s.io/v1beta1/nodes/${name}`])) as NodeMetrics & { kind: string };
    assert.equal(one.kind, 'NodeMetrics');
    assert.equal(one.metadata.labels?.['kubernetes.io/hostname'], name);
    const next = await waitFor(async () => {
      const n = await read();
      const a = first.items.find((x) => x.metadata.name === name), b = n.items.find((x) => x.metadata.name === name);
      return a && b && a.timestamp !== b.timestamp ? { a, b } : undefined;
    }, { timeoutMs: 60_000, intervalMs: 2_000, what: 'a newer scrape' });
    assert.ok(Date.parse(next.b.timestamp) > Date.parse(next.a.timestamp));
    assert.notDeepEqual(next.b.usage, next.a.usage, 'CPU or memory moved between scrapes');
    const missing = await kubectlAsync(['get', '--raw', '/apis/metrics.k8s.io/v1beta1/nodes/no-such-node']);
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /NotFound|not found/);
  });

  test('RBAC: a user without it gets 403; view (aggregating system:aggregated-metrics-reader) may read', async () => {
    const nobody = await kubectlAsync(['get', '--raw', '/apis/metrics.k8s.io/v1beta1/pods', '--as', 'e2e-metrics-nobody']);
    assert.notEqual(nobody.code, 0);
    assert.match(nobody.stderr, /Forbidden|forbidden/);
    const top = await kubectlAsync(['top', 'pods', '-n', ns, '--as', 'e2e-metrics-nobody']);
    assert.notEqual(top.code, 0);
    assert.match(top.stderr, /forbidden/i);
    kubectlOk(['create', 'rolebinding', 'viewer', '-n', ns, '--clusterrole=view', '--user=e2e-metrics-viewer']);
    await waitFor(async () => (await kubectlAsync(['get', '--raw', `/apis/metrics.k8s.io/v1beta1/namespaces/${ns}/pods`, '--as', 'e2e-metrics-viewer'])).code === 0,
      { timeoutMs: 20_000, what: 'view grants metrics.k8s.io pods' });
    assert.match(kubectlOk(['auth', 'can-i', 'list', 'pods.metrics.k8s.io', '-n', ns, '--as', 'e2e-metrics-viewer']), /^yes/);
  });

  test('mkctl top prints kubectl\'s columns and nodes', async () => {
    const want = nodeNames();
    const r = await waitFor(() => { const x = mkctl(['top', 'nodes']); return x.status === 0 && rows(x.stdout).length - 1 === want.length ? x : undefined; }, { timeoutMs: 60_000, what: 'mkctl top nodes' });
    const t = rows(r.stdout);
    assert.deepEqual(t[0], ['NAME', 'CPU(cores)', 'CPU(%)', 'MEMORY(bytes)', 'MEMORY(%)']);
    assert.deepEqual(t.slice(1).map((c) => c[0]).sort(), want);
    const p = mkctl(['top', 'pods', '-A']);
    assert.equal(p.status, 0, p.stderr);
    assert.deepEqual(rows(p.stdout)[0], ['NAMESPACE', 'NAME', 'CPU(cores)', 'MEMORY(bytes)']);
    assert.ok(rows(p.stdout).some((c) => c[0] === 'kube-system' && (c[1] ?? '').startsWith('coredns')), p.stdout);
  });
});
