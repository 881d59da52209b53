/**
 * Issue 6's acceptance on the real 2-node cluster: pod networking (mk8s-bridge + host-gw routes)
 * and Services (kube-proxy). A client pod on node-1 makes the requests; a Deployment of the test
 * server spreads over both nodes. Requests from inside a pod go through `docker exec` into the
 * client pod's container (see inClient).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { kubectl, kubectlOk, ROOT, uniqueName, waitFor } from './lib/cluster.js';

const ns = uniqueName('e2e-net');
const NODE_IPS: Record<string, string> = { 'node-1': '10.240.0.11', 'node-2': '10.240.0.12' };

interface PodInfo { name: string; ip: string; node: string; ready: boolean; deleting: boolean }
const pods = (selector: string): PodInfo[] => {
  const list = JSON.parse(kubectlOk(['-n', ns, 'get', 'pods', '-l', selector, '-o', 'json'])) as { items: { metadata: { name: string; deletionTimestamp?: string }; spec: { nodeName?: string }; status: { podIP?: string; conditions?: { type: string; status: string }[] } }[] };
  return list.items.map((p) => ({
    name: p.metadata.name, ip: p.status.podIP ?? '', node: p.spec.nodeName ?? '', deleting: !!p.metadata.deletionTimestamp,
    ready: (p.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'),
  }));
};

/**
 * Runs sh -c script in the client pod. Through `docker exec` on the container the shim labelled
 * for it (io.kubernetes.pod.*): the same container `kubectl exec` reaches, without depending on
 * the exec proxy path (MK8S_E2E_KUBECTL_EXEC=1 uses kubectl exec instead).
 */
const inClient = (script: string, timeoutMs = 60_000): { code: number; stdout: string; stderr: string } => {
  if (process.env['MK8S_E2E_KUBECTL_EXEC'] === '1') return kubectl(['-n', ns, 'exec', 'client', '--', 'sh', '-c', script], { timeoutMs });
  const id = spawnSync('docker', ['ps', '-q', '--filter', 'label=io.kubernetes.pod.name=client', '--filter', `label=io.kubernetes.pod.namespace=${ns}`, '--filter', 'label=io.kubernetes.container.name=client'], { encoding: 'utf8' }).stdout.trim().split('\n')[0];
  assert.ok(id, 'client container not found');
  const r = spawnSync('docker', ['exec', id, 'sh', '-c', script], { encoding: 'utf8', timeout: timeoutMs });
  if (r.status === null) console.error(`docker exec timed out after ${timeoutMs} ms (${r.error?.message ?? r.signal}); output so far: ${JSON.stringify(r.stdout)}`);
  return { code: r.status ?? -1, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
};
/** n GETs of url/hostname from the client pod; the answers (one per line, '' for a failure). */
const ask = (url: string, n: number): string[] => {
  // Debian's busybox wget segfaults on -T: bound each request with timeout instead.
  const r = inClient(`i=0; while [ $i -lt ${n} ]; do timeout 2 wget -qO- ${url}/hostname 2>/dev/null; echo; i=$((i+1)); done`);
  return r.stdout.split('\n').slice(0, n).map((s) => s.trim());
};
const serviceOf = (name: string) => JSON.parse(kubectlOk(['-n', ns, 'get', 'svc', name, '-o', 'json'])) as { spec: { clusterIP: string; ports: { port: number; nodePort?: number }[] } };
const readyEndpoints = (svc: string): string[] => {
  const r = JSON.parse(kubectlOk(['-n', ns, 'get', 'endpointslices', '-l', `kubernetes.io/service-name=${svc}`, '-o', 'json'])) as { items: { endpoints?: { addresses: string[]; conditions?: { ready?: boolean } }[] }[] };
  return r.items.flatMap((s) => (s.endpoints ?? []).filter((e) => e.conditions?.ready !== false).flatMap((e) => e.addresses)).sort();
};
const natRules = (node: string) => spawnSync('ip', ['netns', 'exec', `mk8s-${node}`, 'iptables-save'], { encoding: 'utf8' }).stdout;

const manifest = (replicas: number) => `
apiVersion: v1
kind: Namespace
metadata: { name: ${ns} }
---
apiVersion: apps/v1
kind: Deployment
metadata: { name: web, namespace: ${ns} }
spec:
  replicas: ${replicas}
  selector: { matchLabels: { app: web } }
  template:
    metadata: { labels: { app: web } }
    spec:
      terminationGracePeriodSeconds: 2
      # Replicas on both nodes, whatever else the nodes run.
      topologySpreadConstraints:
      - { maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule, labelSelector: { matchLabels: { app: web } } }
      containers:
      - name: web
        image: mk8s/testserver:1.0
        imagePullPolicy: Never
        ports: [{ containerPort: 8080 }]
        readinessProbe: { httpGet: { path: /readyz, port: 8080 }, periodSeconds: 1, timeoutSeconds: 5 }
---
apiVersion: v1
kind: Pod
metadata: { name: unready, namespace: ${ns}, labels: { app: web, role: unready } }
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: web
    image: mk8s/testserver:1.0
    imagePullPolicy: Never
    env: [{ name: FAIL_READY, value: "1" }]
    readinessProbe: { httpGet: { path: /readyz, port: 8080 }, periodSeconds: 1, timeoutSeconds: 5 }
---
apiVersion: v1
kind: Pod
metadata: { name: client, namespace: ${ns} }
spec:
  nodeName: node-1
  terminationGracePeriodSeconds: 1
  containers:
  - name: client
    image: mk8s/busybox:1.36
    imagePullPolicy: Never
    command: [sleep, "3600"]
---
apiVersion: v1
kind: Service
metadata: { name: web, namespace: ${ns} }
spec:
  type: NodePort
  selector: { app: web }
  ports: [{ port: 80, targetPort: 8080 }]
---
apiVersion: v1
kind: Service
metadata: { name: nobody, namespace: ${ns} }
spec:
  selector: { app: nobody-has-this-label }
  ports: [{ port: 80, targetPort: 8080 }]
`;

describe('pod networking and Services on 2 nodes', { timeout: 600_000 }, () => {
  let web: ReturnType<typeof serviceOf>;
  before(async () => {
    // The namespace first: with ServiceAccount admission its pods wait for the `default` ServiceAccount (lib/cluster.ts).
    kubectlOk(['create', 'namespace', ns]);
    kubectlOk(['apply', '-f', '-'], { input: manifest(4) });
    await waitFor(() => pods('app=web,!role').filter((p) => p.ready).length === 4 && pods('role=unready').every((p) => p.ip) && pods('app=web').length === 5,
      { timeoutMs: 180_000, what: '4 ready web pods and the unready one' }).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${kubectl(['-n', ns, 'get', 'pods', '-o', 'wide']).stdout}`);
    });
    await waitFor(() => pods('!app').some((p) => p.name === 'client' && p.ip), { timeoutMs: 120_000, what: 'the client pod' });
    await waitFor(() => readyEndpoints('web').length === 4, { timeoutMs: 30_000, what: 'the EndpointSlice to list 4 ready endpoints' });
    web = serviceOf('web');
  });
  after(() => { kubectl(['delete', 'namespace', ns, '--wait=false']); });

  test('pod IPs are unique, from each node\'s podCIDR, and a pod on node-1 reaches a pod on node-2', () => {
    const all = [...pods('app=web'), ...pods('!app')];
    assert.equal(new Set(all.map((p) => p.ip)).size, all.length, 'unique pod IPs');
    const nodes = JSON.parse(kubectlOk(['get', 'nodes', '-o', 'json'])) as { items: { metadata: { name: string }; spec: { podCIDR?: string } }[] };
    for (const p of all) {
      const cidr = nodes.items.find((n) => n.metadata.name === p.node)?.spec.podCIDR ?? '';
      assert.ok(p.ip.startsWith(cidr.split('.').slice(0, 3).join('.') + '.'), `${p.name} ${p.ip} in ${p.node}'s ${cidr}`);
    }
    const remote = pods('app=web,!role').find((p) => p.node === 'node-2');
    assert.ok(remote, 'a web pod on node-2 (the scheduler spreads 4 replicas over 2 nodes)');
    assert.deepEqual(ask(`http://${remote.ip}:8080`, 1), [remote.name]);
  });

  test('the ClusterIP is answered by replicas on both nodes over 50 requests, never by the unready pod', async () => {
    assert.match(web.spec.clusterIP, /^10\.(9[6-9]|10[0-9]|11[01])\.\d+\.\d+$/, 'a ClusterIP from 10.96.0.0/12');
    const answers = ask(`http://${web.spec.clusterIP}:${web.spec.ports[0]!.port}`, 50);
    const byName = new Map(pods('app=web').map((p) => [p.name, p.node]));
    assert.equal(answers.filter((a) => !a).length, 0, `all 50 answered: ${JSON.stringify(answers)}`);
    assert.deepEqual(new Set(answers.map((a) => byName.get(a))), new Set(['node-1', 'node-2']), `answers: ${JSON.stringify(answers)}`);
    assert.ok(!answers.includes('unready'), 'the pod failing readiness got traffic');
  });

  test('NodePort answers from the host at either node\'s IP', async () => {
    const np = web.spec.ports[0]!.nodePort;
    assert.ok(np && np >= 30000 && np <= 32767, `nodePort ${np} in 30000-32767`);
    const names = new Set(pods('app=web,!role').map((p) => p.name));
    for (const ip of Object.values(NODE_IPS)) {
      const res = await fetch(`http://${ip}:${np}/hostname`, { signal: AbortSignal.timeout(5000) });
      assert.ok(names.has(await res.text()), `NodePort on ${ip}`);
    }
  });

  test('a Service with no endpoints is refused at once, not timed out', () => {
    const svc = serviceOf('nobody');
    // wget's exit within the 5 s bound and its "refused" are the point: a REJECT, not a DROP.
    const r = inClient(`timeout 5 wget -qO- http://${svc.spec.clusterIP}/ 2>&1; echo "rc=$?"`);
    assert.match(r.stdout, /refused/i, r.stdout);
    assert.doesNotMatch(r.stdout, /rc=143/, 'timed out instead of being refused');
  });

  test('scaling the Deployment changes who answers within 2 s of the EndpointSlice change', async () => {
    const url = `http://${web.spec.clusterIP}`;
    kubectlOk(['-n', ns, 'scale', 'deployment', 'web', '--replicas=1']);
    await waitFor(() => readyEndpoints('web').length === 1, { timeoutMs: 60_000, intervalMs: 100, what: 'one ready endpoint after scaling to 1' });
    const left = pods('app=web,!role').filter((p) => !p.deleting && p.ready).map((p) => p.name);
    await waitFor(() => { const a = ask(url, 5); return a.every((x) => left.includes(x)) && a; }, { timeoutMs: 2000 + 3000 /* one probe round of 5 execs on a loaded machine */, intervalMs: 50, what: `only ${left.join(',')} to answer` });
    kubectlOk(['-n', ns, 'scale', 'deployment', 'web', '--replicas=3']);
    await waitFor(() => readyEndpoints('web').length === 3, { timeoutMs: 120_000, intervalMs: 100, what: 'three ready endpoints after scaling to 3' });
    const now = pods('app=web,!role').filter((p) => !p.deleting && p.ready).map((p) => p.name);
    await waitFor(() => new Set(ask(url, 20)).size >= 2, { timeoutMs: 2000 + 6000, intervalMs: 50, what: `new replicas among ${now.join(',')} to answer` });
  });

  test('deleting a Service removes its rules on both nodes', async () => {
    const comment = `${ns}/nobody`;
    await waitFor(() => natRules('node-1').includes(comment) && natRules('node-2').includes(comment), { timeoutMs: 10_000, what: 'rules for the Service' });
    kubectlOk(['-n', ns, 'delete', 'svc', 'nobody']);
    await waitFor(() => !natRules('node-1').includes(comment) && !natRules('node-2').includes(comment), { timeoutMs: 10_000, what: 'its rules to go' });
  });

  test('killing kube-proxy and flushing its chains is repaired on restart', async () => {
    const pidFile = join(ROOT, '.mk8s', 'run', 'node-1-kube-proxy.pid');
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    process.kill(pid, 'SIGKILL');
    await waitFor(() => { try { process.kill(pid, 0); return false; } catch { return true; } }, { timeoutMs: 10_000, what: 'kube-proxy to die' });
    for (const table of ['nat', 'filter']) {
      spawnSync('ip', ['netns', 'exec', 'mk8s-node-1', 'iptables', '-t', table, '-F', 'KUBE-SERVICES']);
    }
    const url = `http://${web.spec.clusterIP}`;
    assert.deepEqual(ask(url, 1), [''], 'the ClusterIP is dead without its rules');
    const up = spawnSync(process.execPath, [join(ROOT, 'mkctl/dist/main.js'), 'cluster', 'up', '--nodes', '2'], { encoding: 'utf8', timeout: 180_000 });
    assert.equal(up.status, 0, up.stdout + up.stderr);
    await waitFor(() => ask(url, 1)[0], { timeoutMs: 60_000, what: 'the ClusterIP to answer again' });
  });
});
