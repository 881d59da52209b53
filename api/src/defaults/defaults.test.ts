import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Pods, Services, Deployments, ReplicaSets, Namespaces, Nodes, Secrets, ConfigMaps, EndpointSlices } from '../scheme.js';
import { applyDefaults } from './defaults.js';
import { defaultImagePullPolicy, podQOSClass } from './pod.js';

describe('imagePullPolicy', () => {
  const cases = [
    ['nginx', 'Always'], ['nginx:latest', 'Always'], ['nginx:1.26', 'IfNotPresent'], ['localhost:5000/nginx', 'Always'],
    ['localhost:5000/nginx:1.0', 'IfNotPresent'], ['nginx@sha256:abc', 'IfNotPresent'], ['mk8s/busybox:1', 'IfNotPresent'],
  ] as const;
  for (const [image, want] of cases) test(`${image} → ${want}`, () => assert.equal(defaultImagePullPolicy(image), want));
});

describe('applyDefaults', () => {
  test('pod gets upstream defaults', () => {
    const pod = {
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default' },
      spec: {
        containers: [{
          name: 'c', image: 'nginx', ports: [{ containerPort: 80 }],
          livenessProbe: { httpGet: { port: 80 } },
          resources: { limits: { cpu: '0.5', memory: '128Mi' } },
          env: [{ name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } }],
        }],
        volumes: [{ name: 'cm', configMap: { name: 'x' } }, { name: 's', secret: { secretName: 'y' } }, { name: 'e' }],
      },
    };
    const got = applyDefaults(Pods, pod);
    assert.notEqual(got, pod);
    assert.equal((pod.spec as Record<string, unknown>)['restartPolicy'], undefined, 'input untouched');
    assert.deepEqual(got.spec, {
      containers: [{
        name: 'c', image: 'nginx', ports: [{ containerPort: 80, protocol: 'TCP' }],
        livenessProbe: { httpGet: { port: 80, path: '/', scheme: 'HTTP' }, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 },
        resources: { limits: { cpu: '500m', memory: '128Mi' }, requests: { cpu: '500m', memory: '128Mi' } },
        env: [{ name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName', apiVersion: 'v1' } } }],
        imagePullPolicy: 'Always', terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File',
      }],
      volumes: [{ name: 'cm', configMap: { name: 'x', defaultMode: 420 } }, { name: 's', secret: { secretName: 'y', defaultMode: 420 } }, { name: 'e', emptyDir: {} }],
      dnsPolicy: 'ClusterFirst', restartPolicy: 'Always', securityContext: {}, terminationGracePeriodSeconds: 30,
      schedulerName: 'default-scheduler', enableServiceLinks: true, serviceAccountName: 'default', serviceAccount: 'default',
      priority: 0, preemptionPolicy: 'PreemptLowerPriority',
      tolerations: [
        { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
        { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      ],
    });
  });
  test('pod defaults are idempotent and keep explicit values', () => {
    const pod = { metadata: { name: 'p' }, spec: { restartPolicy: 'Never', serviceAccountName: 'sa', containers: [{ name: 'c', image: 'busybox:1', imagePullPolicy: 'Never', resources: { requests: { cpu: '1' }, limits: { cpu: '2' } } }] } };
    const once = applyDefaults(Pods, pod);
    assert.deepEqual(applyDefaults(Pods, once), once);
    assert.equal(once.spec.restartPolicy, 'Never');
    assert.equal(once.spec.serviceAccountName, 'sa');
    assert.equal(once.spec.containers[0]!.imagePullPolicy, 'Never');
    assert.deepEqual(once.spec.containers[0]!.resources.requests, { cpu: '1' });
  });
  test('hostNetwork pods default hostPort to containerPort', () => {
    const got = applyDefaults(Pods, { metadata: { name: 'p' }, spec: { hostNetwork: true, containers: [{ name: 'c', image: 'x:1', ports: [{ containerPort: 8080 }] }] } });
    assert.equal((got.spec.containers[0]!.ports[0] as Record<string, unknown>)['hostPort'], 8080);
  });
  test('service', () => {
    const got = applyDefaults(Services, { metadata: { name: 's' }, spec: { selector: { app: 'web' }, ports: [{ port: 80 }, { port: 443, targetPort: 'https' }] } });
    assert.deepEqual(got.spec, {
      selector: { app: 'web' }, ports: [{ port: 80, protocol: 'TCP', targetPort: 80 }, { port: 443, targetPort: 'https', protocol: 'TCP' }],
      type: 'ClusterIP', sessionAffinity: 'None', internalTrafficPolicy: 'Cluster', ipFamilyPolicy: 'SingleStack', ipFamilies: ['IPv4'],
    });
  });
  test('NodePort service gets externalTrafficPolicy; ExternalName gets no IP fields', () => {
    const np = applyDefaults(Services, { metadata: { name: 's' }, spec: { type: 'NodePort', ports: [{ port: 80 }] } });
    assert.equal((np.spec as Record<string, unknown>)['externalTrafficPolicy'], 'Cluster');
    const en = applyDefaults(Services, { metadata: { name: 's' }, spec: { type: 'ExternalName', externalName: 'example.com' } });
    assert.equal((en.spec as Record<string, unknown>)['ipFamilies'], undefined);
    assert.equal((en.spec as Record<string, unknown>)['internalTrafficPolicy'], undefined);
  });
  test('deployment', () => {
    const got = applyDefaults(Deployments, { metadata: { name: 'd' }, spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'nginx', image: 'nginx:1.26' }] } } } });
    const spec = got.spec as Record<string, unknown>;
    assert.equal(spec['replicas'], 1);
    assert.deepEqual(spec['strategy'], { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } });
    assert.equal(spec['revisionHistoryLimit'], 10);
    assert.equal(spec['progressDeadlineSeconds'], 600);
    const tspec = (spec['template'] as { spec: Record<string, unknown> }).spec;
    assert.equal(tspec['restartPolicy'], 'Always');
    assert.equal(tspec['serviceAccountName'], undefined, 'templates get no admission defaults');
    assert.equal(tspec['enableServiceLinks'], undefined);
    assert.deepEqual(tspec['containers'], [{ name: 'nginx', image: 'nginx:1.26', imagePullPolicy: 'IfNotPresent', terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File' }]);
  });
  test('Recreate deployment gets no rollingUpdate', () => {
    const got = applyDefaults(Deployments, { metadata: { name: 'd' }, spec: { strategy: { type: 'Recreate' } } });
    assert.deepEqual((got.spec as Record<string, unknown>)['strategy'], { type: 'Recreate' });
  });
  test('replicaset', () => {
    const got = applyDefaults(ReplicaSets, { metadata: { name: 'r' }, spec: { template: { spec: { containers: [] } } } });
    assert.equal((got.spec as Record<string, unknown>)['replicas'], 1);
  });
  test('namespace', () => {
    assert.deepEqual(applyDefaults(Namespaces, { metadata: { name: 'team' } }), {
      metadata: { name: 'team', labels: { 'kubernetes.io/metadata.name': 'team' } }, spec: { finalizers: ['kubernetes'] }, status: { phase: 'Active' },
    });
  });
  test('node allocatable defaults to capacity', () => {
    const got = applyDefaults(Nodes, { metadata: { name: 'n' }, status: { capacity: { cpu: '2', memory: '2048Ki', pods: '110' } } });
    assert.deepEqual((got.status as Record<string, unknown>)['allocatable'], { cpu: '2', memory: '2Mi', pods: '110' });
  });
  test('secret type', () => assert.equal((applyDefaults(Secrets, { metadata: { name: 's' } }) as Record<string, unknown>)['type'], 'Opaque'));
  test('secret stringData is folded into data', () => {
    const got = applyDefaults(Secrets, { metadata: { name: 's' }, data: { a: 'eA==', b: 'eA==' }, stringData: { b: 'hello', c: 'wörld' } }) as Record<string, unknown>;
    assert.deepEqual(got['data'], { a: 'eA==', b: 'aGVsbG8=', c: 'd8O2cmxk' });
    assert.equal(got['stringData'], undefined);
  });
  test('configmap untouched', () => assert.deepEqual(applyDefaults(ConfigMaps, { metadata: { name: 'c' }, data: { a: 'b' } }), { metadata: { name: 'c' }, data: { a: 'b' } }));
  test('endpointslice ports', () => {
    const got = applyDefaults(EndpointSlices, { metadata: { name: 'e' }, addressType: 'IPv4', endpoints: [], ports: [{ port: 80 }] });
    assert.deepEqual(got.ports, [{ port: 80, name: '', protocol: 'TCP' }]);
  });
});

describe('podQOSClass', () => {
  const c = (resources: unknown) => ({ spec: { containers: [{ name: 'c', resources }] } });
  const cases = [
    { name: 'no resources', pod: c(undefined), want: 'BestEffort' },
    { name: 'limits = requests', pod: c({ limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '1000m', memory: '1Gi' } }), want: 'Guaranteed' },
    { name: 'requests only', pod: c({ requests: { cpu: '100m' } }), want: 'Burstable' },
    { name: 'cpu limit only', pod: c({ limits: { cpu: '1' } }), want: 'Burstable' },
  ];
  for (const tc of cases) test(tc.name, () => assert.equal(podQOSClass(tc.pod), tc.want));
});
