/**
 * `kubectl top` and `mkctl top` on the real cluster (issue 20): metrics-server (started by cluster up)
 * scrapes every kubelet's /metrics/resource and serves metrics.k8s.io/v1beta1 through the aggregator.
 * A pod burning CPU shows a real, non-zero figure; the node figures change between two scrapes;
 * `--containers`, `-A`, `-l` and a single node or pod behave as upstream. One namespace, deleted afterwards.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { KUBECONFIG, ROOT, kubectl, kubectlOk, uniqueName, waitFor } from './lib/cluster.js';

const ns = uniqueName('e2e-top');
const k = (args: string[], input?: string) => kubectlOk(['-n', ns, ...args], input === undefined ? {} : { input });
const mkctl = (args: string[]) => spawnSync(process.execPath, [join(ROOT, 'mkctl', 'dist', 'main.js'), '--kubeconfig', KUBECONFIG, ...args], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, MK8S_ROOT: ROOT } });

// Two containers: one burns CPU (capped by its limit), one sleeps; `[` and `:` are ash builtins.
const pod = `
apiVersion: v1
kind: Pod
metadata: { name: burn, labels: { app: top-burn } }
spec:
  automountServiceAccountToken: false
  terminationGracePeriodSeconds: 0
  containers:
  - name: burn
    image: busybox
    imagePullPolicy: IfNotPresent
    command: [sh, -c, 'while :; do :; done']
    resources: { limits: { cpu: 300m, memory: 64Mi } }
  - name: idle
    image: busybox
    imagePullPolicy: IfNotPresent
    command: [sleep, '100000']
`;

/** millicores from kubectl's CPU column ("123m" or "1"). */
const milli = (s: string): number => (s.endsWith('m') ? Number(s.slice(0, -1)) : Number(s) * 1000);
/** Rows of a kubectl top table without its header, split on whitespace. */
const rows = (table: string): string[][] => table.trim().split('\n').slice(1).map((l) => l.trim().split(/\s+/));

describe('kubectl top', () => {
  before(() => {
    kubectlOk(['create', 'namespace', ns]);
    k(['apply', '-f', '-'], pod);
    k(['wait', '--for=condition=Ready', 'pod/burn', '--timeout=120s']);
  });
  after(() => { kubectl(['delete', 'namespace', ns, '--wait=false']); });

  test('top nodes: every node with upstream columns, figures that change between scrapes', async () => {
    const nodes = kubectlOk(['get', 'nodes', '-o', 'jsonpath={.items[*].metadata.name}']).trim().split(/\s+/).sort();
    // A node metrics-server has not scraped twice yet is listed with <unknown> (as upstream): wait for figures on every node.
    const table = await waitFor(() => {
      const r = kubectl(['top', 'nodes']);
      return r.code === 0 && rows(r.stdout).length === nodes.length && rows(r.stdout).every((x) => /^\d+m?$/.test(x[1] ?? '') && /^\d+Mi$/.test(x[3] ?? '')) ? r.stdout : undefined;
    }, { timeoutMs: 120_000, intervalMs: 3000, what: 'kubectl top nodes with figures for every node' });
    assert.match(table, /^NAME\s+CPU\(cores\)\s+CPU(\(%\)|%)\s+MEMORY\(bytes\)\s+MEMORY(\(%\)|%)\s*\n/);
    assert.deepEqual(rows(table).map((r) => r[0]).sort(), nodes);
    for (const r of rows(table)) {
      assert.match(r[1]!, /^\d+m?$/, `CPU of ${r[0]}`);
      assert.match(r[2]!, /^\d+%$/);
      assert.match(r[3]!, /^\d+Mi$/, `memory of ${r[0]}`);
      assert.ok(Number(r[3]!.slice(0, -2)) > 0, `${r[0]} uses memory`);
    }
    // metrics-server scrapes every 15 s: a later scrape has another window and another figure.
    const first = JSON.stringify(rows(table).map((r) => [r[1], r[3]]));
    await waitFor(() => { const r = kubectl(['top', 'nodes']); return r.code === 0 && !r.stdout.includes('<unknown>') && JSON.stringify(rows(r.stdout).map((x) => [x[1], x[3]])) !== first; }, { timeoutMs: 90_000, intervalMs: 5000, what: 'node figures changing' });
    const one = kubectlOk(['top', 'node', nodes[0]!, '--no-headers']);
    assert.match(one, new RegExp(`^${nodes[0]}\\s+\\d+m?\\s+\\d+%\\s+\\d+Mi\\s+\\d+%`));
  });

  test('top pods: the burning pod reads CPU near its limit; --containers, -l, -A', async () => {
    const table = await waitFor(() => {
      const r = kubectl(['-n', ns, 'top', 'pods']);
      const row = r.code === 0 ? rows(r.stdout).find((x) => x[0] === 'burn') : undefined;
      return row && milli(row[1]!) >= 150 ? r.stdout : undefined;
    }, { timeoutMs: 120_000, intervalMs: 3000, what: 'the burning pod at ≥150m in kubectl top pods' });
    assert.match(table, /^NAME\s+CPU\(cores\)\s+MEMORY\(bytes\)\s*\n/);
    const row = rows(table).find((x) => x[0] === 'burn')!;
    assert.ok(milli(row[1]!) <= 300 * 1.2, `the limit caps it at 300m: ${row[1]}`);
    assert.match(row[2]!, /^\d+Mi$/);

    const containers = kubectlOk(['-n', ns, 'top', 'pod', 'burn', '--containers']);
    assert.match(containers, /^POD\s+NAME\s+CPU\(cores\)\s+MEMORY\(bytes\)\s*\n/);
    const byName = new Map(rows(containers).map((r) => [r[1], r]));
    assert.deepEqual([...byName.keys()].sort(), ['burn', 'idle']);
    assert.ok(milli(byName.get('burn')![2]!) > milli(byName.get('idle')![2]!), 'the burner uses more CPU than the sleeper');

    assert.match(kubectlOk(['-n', ns, 'top', 'pods', '-l', 'app=top-burn', '--no-headers']), /^burn\s+\d+m/);
    assert.doesNotMatch(kubectl(['-n', ns, 'top', 'pods', '-l', 'app=none']).stdout, /burn/);
    const all = kubectlOk(['top', 'pods', '-A']);
    assert.match(all, /^NAMESPACE\s+NAME\s+CPU\(cores\)\s+MEMORY\(bytes\)/);
    assert.match(all, new RegExp(`\\n${ns}\\s+burn\\s+\\d+m`));
  });

  test('mkctl top node and pod print the same figures', () => {
    const nodes = mkctl(['top', 'node']);
    assert.equal(nodes.status, 0, nodes.stderr);
    assert.match(nodes.stdout, /^NAME\s+CPU\(cores\)/);
    const pods = mkctl(['-n', ns, 'top', 'pod']);
    assert.equal(pods.status, 0, pods.stderr);
    assert.match(pods.stdout, /\nburn\s+\d+m\s+\d+Mi/);
  });
});
