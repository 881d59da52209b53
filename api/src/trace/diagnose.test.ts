import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type * as core from 'kubernetes-types/core/v1.js';
import type * as apps from 'kubernetes-types/apps/v1.js';
import { diagnose, type TraceInput } from './diagnose.js';
import { firstBroken, type Link } from './link.js';
import { proxyEvidenceFromIptables } from './proxy-evidence.js';

/** The chain as text, for assertion messages. */
const show = (links: Link[]) => links.map((l) => `${l.status} ${l.step}: ${l.evidence}${l.owner ? ` [${l.owner}]` : ''}`).join('\n');

const T0 = '2026-11-30T09:00:00Z';
const node = (name: string, ready = 'True'): core.Node => ({ metadata: { name, labels: { 'kubernetes.io/hostname': name } }, status: { conditions: [{ type: 'Ready', status: ready, reason: ready === 'True' ? 'KubeletReady' : 'NodeStatusUnknown', message: ready === 'True' ? 'kubelet is posting ready status' : 'Kubelet stopped posting node status.', lastHeartbeatTime: T0, lastTransitionTime: T0 }] } });
const deploy: apps.Deployment = { metadata: { name: 'web', namespace: 'ns', uid: 'd1', resourceVersion: '10', generation: 1, creationTimestamp: T0, annotations: { 'deployment.kubernetes.io/revision': '1' } }, spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } } } }, status: { observedGeneration: 1 } };
const rs: apps.ReplicaSet = { metadata: { name: 'web-1', namespace: 'ns', uid: 'r1', annotations: { 'deployment.kubernetes.io/revision': '1' }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'd1', controller: true }] }, spec: { replicas: 1, selector: { matchLabels: { app: 'web' } } } };

function pod(over: { spec?: Partial<core.PodSpec>; status?: core.PodStatus; labels?: Record<string, string> } = {}): core.Pod {
  return {
    metadata: { name: 'web-1-a', namespace: 'ns', uid: 'p1', labels: over.labels ?? { app: 'web' }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-1', uid: 'r1', controller: true }] },
    spec: { containers: [{ name: 'web', image: 'mk8s/test-server' }], ...over.spec },
    status: over.status ?? {},
  };
}
const running: core.PodStatus = {
  phase: 'Running', podIP: '10.244.0.5',
  conditions: [{ type: 'PodScheduled', status: 'True', lastTransitionTime: T0 }, { type: 'Ready', status: 'True', lastTransitionTime: T0 }],
  containerStatuses: [{ name: 'web', image: 'mk8s/test-server', imageID: 'docker://sha', ready: true, restartCount: 0, state: { running: { startedAt: T0 } } }],
};
const ev = (reason: string, message: string, kind = 'Pod', name = 'web-1-a', type = 'Warning'): core.Event => ({ metadata: { name: `${name}.${reason}`, creationTimestamp: T0 }, involvedObject: { kind, name, namespace: 'ns' }, reason, message, type, lastTimestamp: T0, count: 3 });
const svc = (selector: Record<string, string>): core.Service => ({ metadata: { name: 'web', namespace: 'ns', uid: 's1', creationTimestamp: T0 }, spec: { selector, clusterIP: '10.96.0.20', ports: [{ port: 80 }] } });
const slice = (addrs: string[]) => ({ metadata: { name: 'web-x', labels: { 'kubernetes.io/service-name': 'web' }, creationTimestamp: T0 }, addressType: 'IPv4', endpoints: addrs.map((a) => ({ addresses: [a], conditions: { ready: true } })) });

const base = (over: Partial<TraceInput>): TraceInput => ({
  kind: 'Deployment', name: 'web', namespace: 'ns', deployment: deploy, replicaSets: [rs], nodes: [node('node-1'), node('node-2')], events: [], configMaps: [], secrets: [], services: [], endpointSlices: [], ...over,
});

describe('trace diagnosis names the first broken link', () => {
  const cases: { name: string; input: TraceInput; step: string; owner: RegExp; evidence: RegExp }[] = [
    {
      name: 'unschedulable pod', step: 'scheduled', owner: /kube-scheduler/, evidence: /didn't match Pod's node affinity\/selector/,
      input: base({
        pods: [pod({ spec: { nodeSelector: { disk: 'ssd' } }, status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', lastTransitionTime: T0 }] } })],
        events: [ev('FailedScheduling', "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector.")],
      }),
    },
    {
      name: 'missing image', step: 'image', owner: /container runtime/, evidence: /ImagePullBackOff for nope:1.*Failed to pull image/,
      input: base({
        pods: [pod({ spec: { nodeName: 'node-1', containers: [{ name: 'web', image: 'nope:1' }] }, status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'True' }], containerStatuses: [{ name: 'web', image: 'nope:1', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "nope:1"' } } }] } })],
        events: [ev('Failed', 'Failed to pull image "nope:1": no such host'), ev('Failed', 'Error: ImagePullBackOff')],
      }),
    },
    {
      name: 'crash loop', step: 'started', owner: /application/, evidence: /CrashLoopBackOff, last exit code 3 \(Error\), 4 restarts/,
      input: base({
        pods: [pod({ spec: { nodeName: 'node-1' }, status: { phase: 'Running', conditions: [{ type: 'PodScheduled', status: 'True' }], containerStatuses: [{ name: 'web', image: 'mk8s/test-server', imageID: 'docker://x', ready: false, restartCount: 4, state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: { terminated: { exitCode: 3, reason: 'Error', finishedAt: T0 } } }] } })],
      }),
    },
    {
      name: 'failing readiness probe', step: 'ready', owner: /readiness probe/, evidence: /Readiness probe failed: HTTP probe failed with statuscode: 500/,
      input: base({
        pods: [pod({
          spec: { nodeName: 'node-1', containers: [{ name: 'web', image: 'mk8s/test-server', readinessProbe: { httpGet: { path: '/ready', port: 8080 } } }] },
          status: { ...running, conditions: [{ type: 'PodScheduled', status: 'True' }, { type: 'Ready', status: 'False', reason: 'ContainersNotReady' }], containerStatuses: [{ ...running.containerStatuses![0]!, ready: false }] },
        })],
        events: [ev('Unhealthy', 'Readiness probe failed: HTTP probe failed with statuscode: 500')],
      }),
    },
    {
      name: 'Service whose selector matches nothing', step: 'selector', owner: /Service spec/, evidence: /selector app=wbe matches no pods in namespace ns \(pods here are labelled app=web\)/,
      input: base({ kind: 'Service', service: svc({ app: 'wbe' }), pods: [pod({ spec: { nodeName: 'node-1' }, status: running })] }),
    },
    {
      name: 'a node that stopped', step: 'node', owner: /kubelet on node-2/, evidence: /node node-2 is NotReady \(Unknown: Kubelet stopped posting node status.\)/,
      input: base({ nodes: [node('node-1'), node('node-2', 'Unknown')], pods: [pod({ spec: { nodeName: 'node-2' }, status: running })] }),
    },
    {
      name: 'missing ConfigMap referenced by env', step: 'started', owner: /kubelet on node-1 \(the container's config/, evidence: /CreateContainerConfigError: configmap "settings" not found \(missing configmap "settings"\)/,
      input: base({
        pods: [pod({
          spec: { nodeName: 'node-1', containers: [{ name: 'web', image: 'mk8s/test-server', env: [{ name: 'MODE', valueFrom: { configMapKeyRef: { name: 'settings', key: 'mode' } } }] }] },
          status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'True' }], containerStatuses: [{ name: 'web', image: 'mk8s/test-server', imageID: 'docker://x', ready: false, restartCount: 0, state: { waiting: { reason: 'CreateContainerConfigError', message: 'configmap "settings" not found' } } }] },
        })],
      }),
    },
    ...([
      { name: 'a command that does not exist (StartError)', owner: /container runtime on node-1.*command could not be started/, evidence: /CrashLoopBackOff, last exit code 128 \(StartError\): exec: "\/no\/such": stat \/no\/such: no such file or directory, 2 restarts/,
        cs: { restartCount: 2, state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: { terminated: { exitCode: 128, reason: 'StartError', message: 'exec: "/no/such": stat /no/such: no such file or directory', finishedAt: T0 } } } },
      { name: 'a create the runtime refused (CreateContainerError)', owner: /container runtime on node-1/, evidence: /CreateContainerError: Error response from daemon: No command specified/,
        cs: { restartCount: 0, state: { waiting: { reason: 'CreateContainerError', message: 'Error response from daemon: No command specified' } } } },
      { name: 'OOMKilled (restartPolicy Never)', owner: /the kernel/, evidence: /exited with code 137 \(OOMKilled\)/, policy: 'Never' as const,
        cs: { restartCount: 0, state: { terminated: { exitCode: 137, reason: 'OOMKilled', finishedAt: T0 } } } },
    ]).map((x) => ({
      name: x.name, step: 'started', owner: x.owner, evidence: x.evidence,
      input: base({ pods: [pod({ spec: { nodeName: 'node-1', ...(x.policy ? { restartPolicy: x.policy } : {}) }, status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'True' }], containerStatuses: [{ name: 'web', image: 'mk8s/test-server', imageID: 'docker://x', ready: false, containerID: 'docker://c', ...x.cs }] } })] }),
    })),
    {
      name: 'an init container in CrashLoopBackOff (Init:CrashLoopBackOff)', step: 'started', owner: /application in the init container/, evidence: /web-1-a\/init setup: CrashLoopBackOff, last exit code 1 \(Error\)/,
      input: base({ pods: [pod({ spec: { nodeName: 'node-1', initContainers: [{ name: 'setup', image: 'busybox' }] }, status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'True' }],
        initContainerStatuses: [{ name: 'setup', image: 'busybox', imageID: 'docker://b', ready: false, restartCount: 1, state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: { terminated: { exitCode: 1, reason: 'Error', finishedAt: T0 } } }],
        containerStatuses: [{ name: 'web', image: 'mk8s/test-server', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason: 'PodInitializing' } } }] } })] }),
    },
    {
      name: 'a sandbox that cannot be created (FailedCreatePodSandBox)', step: 'sandbox', owner: /container runtime on node-1.*CNI: the pod sandbox/, evidence: /Failed to create pod sandbox: .*ip_local_port_range/,
      input: base({
        pods: [pod({ spec: { nodeName: 'node-1' }, status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'True' }], containerStatuses: [{ name: 'web', image: 'mk8s/test-server', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason: 'ContainerCreating' } } }] } })],
        events: [ev('FailedCreatePodSandBox', 'Failed to create pod sandbox: start pod sandbox for ns/web-1-a: write /proc/sys/net/ipv4/ip_local_port_range: invalid argument')],
      }),
    },
    {
      name: 'an invalid image name (InvalidImageName)', step: 'image', owner: /the Pod spec \(yours\)/, evidence: /InvalidImageName: .*must be lowercase/,
      input: base({ pods: [pod({ spec: { nodeName: 'node-1' }, status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'True' }], containerStatuses: [{ name: 'web', image: 'Web:1', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason: 'InvalidImageName', message: 'Failed to apply default image tag "Web:1": couldn\'t parse image name "Web:1": invalid reference format: repository name (Web) must be lowercase' } } }] } })] }),
    },
    {
      name: 'no ReplicaSet (controller-manager down)', step: 'replicaset', owner: /deployment controller/, evidence: /no ReplicaSet owned by deployment web/,
      input: base({ replicaSets: [], pods: [] }),
    },
    {
      name: 'ready pod missing from the endpoints', step: 'endpoints', owner: /endpointslice controller/, evidence: /not in its EndpointSlices/,
      input: base({ pods: [pod({ spec: { nodeName: 'node-1' }, status: running })], services: [svc({ app: 'web' })], endpointSlices: [slice([]) as never] }),
    },
    {
      name: 'kube-proxy has no rules on one node', step: 'kube-proxy', owner: /kube-proxy on node-2/, evidence: /node-2: no KUBE-SERVICES rule/,
      input: base({
        pods: [pod({ spec: { nodeName: 'node-1' }, status: running })], services: [svc({ app: 'web' })], endpointSlices: [slice(['10.244.0.5']) as never],
        proxy: { 'node-1': [{ node: 'node-1', present: true, endpoints: 1, detail: 'ns/web → KUBE-SVC-X with 1 endpoints' }], 'node-2': [{ node: 'node-2', present: false, endpoints: 0, detail: 'no KUBE-SERVICES rule for ns/web' }] },
      }),
    },
    {
      name: 'the Service name does not resolve from one node', step: 'dns', owner: /cluster DNS \(kube-system\/coredns/, evidence: /web\.ns\.svc\.cluster\.local from node-2: no answer from 10\.96\.0\.10 in 2 s/,
      input: base({
        pods: [pod({ spec: { nodeName: 'node-1' }, status: running })], services: [svc({ app: 'web' })], endpointSlices: [slice(['10.244.0.5']) as never],
        proxy: { 'node-1': [{ node: 'node-1', present: true, endpoints: 1, detail: 'ns/web' }], 'node-2': [{ node: 'node-2', present: true, endpoints: 1, detail: 'ns/web' }] },
        dns: { 'node-1': [{ node: 'node-1', name: 'web.ns.svc.cluster.local', addresses: ['10.96.0.20'], ms: 2 }], 'node-2': [{ node: 'node-2', name: 'web.ns.svc.cluster.local', addresses: [], error: 'ETIMEOUT', ms: 2000 }] },
      }),
    },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      const links = diagnose(tc.input);
      const b = firstBroken(links);
      assert.ok(b, show(links));
      assert.equal(links.at(-1), b, 'stops at the first broken link');
      assert.equal(b.step, tc.step, show(links));
      assert.match(b.owner ?? '', tc.owner);
      assert.match(b.evidence, tc.evidence);
      assert.ok(b.hint, 'says what to look at');
    });
  }

  test('a healthy chain ends at kube-proxy on every node', () => {
    const links = diagnose(base({
      pods: [pod({ spec: { nodeName: 'node-1' }, status: running })], services: [svc({ app: 'web' })], endpointSlices: [slice(['10.244.0.5']) as never],
      events: [ev('ScalingReplicaSet', 'Scaled up replica set web-1 to 1', 'Deployment', 'web', 'Normal'), ev('SuccessfulCreate', 'Created pod: web-1-a', 'ReplicaSet', 'web-1', 'Normal')],
      proxy: { 'node-1': [{ node: 'node-1', present: true, endpoints: 1, detail: 'ns/web' }], 'node-2': [{ node: 'node-2', present: true, endpoints: 1, detail: 'ns/web' }] },
      dns: { 'node-1': [{ node: 'node-1', name: 'web.ns.svc.cluster.local', addresses: ['10.96.0.20'], ms: 2 }], 'node-2': [{ node: 'node-2', name: 'web.ns.svc.cluster.local', addresses: ['10.96.0.20'], ms: 3 }] },
    }));
    assert.equal(firstBroken(links), undefined, show(links));
    assert.deepEqual(links.map((l) => l.step), ['stored', 'replicaset', 'pods', 'scheduled', 'node', 'image', 'started', 'ready', 'endpoints', 'kube-proxy', 'dns']);
    assert.match(links.at(-1)!.evidence, /web\.ns\.svc\.cluster\.local → 10\.96\.0\.20 from node-1 \(2 ms\), node-2 \(3 ms\)/);
    assert.match(links[0]!.evidence, /uid=d1 resourceVersion=10/);
  });
});

describe('proxy evidence from iptables-save', () => {
  const nat = [
    '-A KUBE-SERVICES -d 10.96.0.20/32 -p tcp -m comment --comment "ns/web:http cluster IP" -m tcp --dport 80 -j KUBE-SVC-ABC',
    '-A KUBE-SVC-ABC ! -s 10.244.0.0/16 -d 10.96.0.20/32 -p tcp -m comment --comment "ns/web:http cluster IP" -m tcp --dport 80 -j KUBE-MARK-MASQ',
    '-A KUBE-SVC-ABC -m comment --comment "ns/web:http -> 10.244.0.5:8080" -m statistic --mode random --probability 0.5 -j KUBE-SEP-1',
    '-A KUBE-SVC-ABC -m comment --comment "ns/web:http -> 10.244.1.5:8080" -j KUBE-SEP-2',
  ].join('\n');
  test('counts the endpoints of a Service chain', () => {
    assert.deepEqual(proxyEvidenceFromIptables('n1', nat, [{ namespace: 'ns', name: 'web' }, { namespace: 'ns', name: 'db' }]).map((e) => [e.present, e.endpoints]), [[true, 2], [false, 0]]);
  });
});

describe('trace: claim → bound PV → node → mounted', () => {
  const claim = (phase: string, o: { volumeName?: string; cls?: string } = {}): core.PersistentVolumeClaim => ({ metadata: { name: 'data', namespace: 'ns', uid: 'c1', creationTimestamp: T0 }, spec: { storageClassName: o.cls ?? 'standard', ...(o.volumeName ? { volumeName: o.volumeName } : {}) }, status: { phase, ...(phase === 'Bound' ? { capacity: { storage: '1Gi' } } : {}) } });
  const pv: core.PersistentVolume = { metadata: { name: 'pvc-c1', annotations: { 'pv.kubernetes.io/provisioned-by': 'mk8s.io/local-path' } },
    spec: { hostPath: { path: '/d/pvc-c1_ns_data' }, persistentVolumeReclaimPolicy: 'Delete', nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['node-2'] }] }] } } }, status: { phase: 'Bound' } };
  const user = (nodeName: string, status: core.PodStatus = running) => pod({ spec: { nodeName, volumes: [{ name: 'v', persistentVolumeClaim: { claimName: 'data' } }] }, status });
  const pvcInput = (over: Partial<TraceInput>): TraceInput => base({ kind: 'PersistentVolumeClaim', name: 'data', volumes: [pv], ...over });

  test('a Bound, mounted claim: every link ok', () => {
    const c = claim('Bound', { volumeName: 'pvc-c1' });
    const links = diagnose(pvcInput({ claim: c, claims: [c], pods: [user('node-2')] }));
    assert.equal(firstBroken(links), undefined, show(links));
    assert.deepEqual(links.map((l) => l.step), ['stored', 'claim', 'volume', 'node', 'mounted']);
    assert.match(links[2]!.evidence, /pvc-c1 Bound, Delete, hostPath \/d\/pvc-c1_ns_data, provisioned by mk8s.io\/local-path/);
    assert.match(links[4]!.evidence, /web-1-a on node-2 Running/);
  });

  test('WaitForFirstConsumer: waiting on the scheduler; an absent class: broken at the claim', () => {
    const waiting = claim('Pending');
    let links = diagnose(pvcInput({ claim: waiting, claims: [waiting], events: [ev('WaitForFirstConsumer', 'waiting for first consumer to be created before binding', 'PersistentVolumeClaim', 'data', 'Normal')] }));
    assert.equal(links.at(-1)!.status, 'waiting');
    assert.match(links.at(-1)!.owner!, /kube-scheduler/);
    const gold = claim('Pending', { cls: 'gold' });
    links = diagnose(pvcInput({ claim: gold, claims: [gold], events: [ev('ProvisioningFailed', 'storageclass.storage.k8s.io "gold" not found', 'PersistentVolumeClaim', 'data')] }));
    assert.equal(firstBroken(links)?.step, 'claim');
    assert.match(firstBroken(links)!.evidence, /ProvisioningFailed: storageclass.storage.k8s.io "gold" not found/);
  });

  test('a pod chain shows its volumes; a FailedMount breaks it there', () => {
    const c = claim('Bound', { volumeName: 'pvc-c1' });
    let links = diagnose(base({ kind: 'Pod', name: 'web-1-a', pod: user('node-2'), pods: [user('node-2')], claims: [c], volumes: [pv] }));
    assert.ok(links.some((l) => l.step === 'volumes' && l.status === 'ok' && /data → pvc-c1 on node-2/.test(l.evidence)), show(links));
    const creating: core.PodStatus = { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'True' }], containerStatuses: [{ name: 'web', image: 'x', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason: 'ContainerCreating' } } }] };
    links = diagnose(base({ kind: 'Pod', name: 'web-1-a', pod: user('node-2', creating), pods: [user('node-2', creating)], claims: [c], volumes: [pv], events: [ev('FailedMount', 'MountVolume.SetUp failed: error processing PVC ns/data: PVC is not bound')] }));
    assert.equal(firstBroken(links)?.step, 'volumes');
  });
});
