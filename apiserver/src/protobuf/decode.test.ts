import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { isBadRequest } from '@mk8s/api';
import protobuf from 'protobufjs';
import { decodeKubernetesProtobuf } from './decode.js';

// testdata/*.pb: request bodies the real kubectl 1.32.4 sent (captured with a logging proxy).
const fixture = (name: string) => readFileSync(new URL(`./testdata/${name}.pb`, import.meta.url));

const cases: { name: string; file: string; want: Record<string, unknown> }[] = [
  { name: 'create namespace', file: 'namespace', want: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x' }, spec: {}, status: {} } },
  { name: 'create configmap --from-literal', file: 'configmap', want: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm1' }, data: { a: '1', b: 'two' } } },
  {
    name: 'create secret generic (bytes → base64, binary file kept exact)', file: 'secret',
    want: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's1' }, data: { user: Buffer.from('admin').toString('base64'), bin: Buffer.from([0x61, 0, 0xff, 0x62]).toString('base64') } },
  },
  {
    name: 'create secret docker-registry', file: 'secret-docker-registry',
    want: {
      apiVersion: 'v1', kind: 'Secret', metadata: { name: 'reg' }, type: 'kubernetes.io/dockerconfigjson',
      data: { '.dockerconfigjson': Buffer.from('{"auths":{"r.example":{"username":"u","password":"p","auth":"dTpw"}}}').toString('base64') },
    },
  },
  {
    name: 'create deployment --image --replicas --port (zero Times dropped, empty structs kept)', file: 'deployment',
    want: {
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', labels: { app: 'web' } },
      spec: {
        replicas: 3, selector: { matchLabels: { app: 'web' } }, strategy: {},
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'nginx', image: 'nginx:1.25', ports: [{ containerPort: 80 }], resources: {} }] } },
      },
      status: {},
    },
  },
  {
    name: 'create service clusterip --tcp (IntOrString targetPort)', file: 'service-clusterip',
    want: {
      apiVersion: 'v1', kind: 'Service', metadata: { name: 'svc1', labels: { app: 'svc1' } },
      spec: {
        ports: [{ name: '80-8080', protocol: 'TCP', port: 80, targetPort: 8080 }, { name: '443', protocol: 'TCP', port: 443, targetPort: 443 }],
        selector: { app: 'svc1' }, type: 'ClusterIP',
      },
      status: { loadBalancer: {} },
    },
  },
  {
    name: 'create service nodeport', file: 'service-nodeport',
    want: {
      apiVersion: 'v1', kind: 'Service', metadata: { name: 'np1', labels: { app: 'np1' } },
      spec: { ports: [{ name: '80-8080', protocol: 'TCP', port: 80, targetPort: 8080, nodePort: 30080 }], selector: { app: 'np1' }, type: 'NodePort' },
      status: { loadBalancer: {} },
    },
  },
  { name: 'create serviceaccount', file: 'serviceaccount', want: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'sa1' } } },
  {
    name: 'create role (the core group "" kept inside lists)', file: 'role',
    want: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'r1' }, rules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }] },
  },
  {
    name: 'create configmap --from-file of non-UTF-8 bytes (binaryData)', file: 'configmap-binary',
    want: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm2' }, data: { a: '1' }, binaryData: { bin: 'YQD/Yg==' } },
  },
  {
    name: 'create rolebinding --user --group --serviceaccount', file: 'rolebinding',
    want: {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'rb1' },
      subjects: [
        { kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'alice' },
        { kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'devs' },
        { kind: 'ServiceAccount', name: 'sa1', namespace: 'default' },
      ],
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'r1' },
    },
  },
  {
    name: 'create clusterrolebinding', file: 'clusterrolebinding',
    want: {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'crb1' },
      subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'bob' }],
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
    },
  },
  {
    name: 'create clusterrole --aggregation-rule', file: 'clusterrole-aggregated',
    want: {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'cr2' },
      aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'rbac.example.com/aggregate-to-monitoring': 'true' } }] },
    },
  },
  {
    name: 'create priorityclass', file: 'priorityclass',
    want: { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'pc1' }, value: 1000, description: 'hi', preemptionPolicy: 'PreemptLowerPriority' },
  },
  {
    name: 'auth can-i get pods', file: 'selfsubjectaccessreview',
    want: { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', metadata: {}, spec: { resourceAttributes: { namespace: 'default', verb: 'get', resource: 'pods' } }, status: { allowed: false } },
  },
  {
    name: 'create job --image -- command', file: 'job',
    want: {
      apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'pi' },
      spec: { template: { metadata: {}, spec: { containers: [{ name: 'pi', image: 'busybox:1.36', command: ['sh', '-c', 'echo hi'], resources: {} }], restartPolicy: 'Never' } } },
      status: {},
    },
  },
  {
    name: 'create cronjob --schedule --restart', file: 'cronjob',
    want: {
      apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'tick' },
      spec: {
        schedule: '*/5 * * * *',
        jobTemplate: {
          metadata: { name: 'tick' },
          spec: { template: { metadata: {}, spec: { containers: [{ name: 'tick', image: 'busybox:1.36', command: ['date'], resources: {} }], restartPolicy: 'OnFailure' } } },
        },
      },
      status: {},
    },
  },
  {
    // The CronJob as the server returned it (defaulted pod template), the manual-instantiation
    // annotation and a controller reference without blockOwnerDeletion, as kubectl builds it.
    name: 'create job --from=cronjob/x', file: 'job-from-cronjob',
    want: {
      apiVersion: 'batch/v1', kind: 'Job',
      metadata: {
        name: 'manual', annotations: { 'cronjob.kubernetes.io/instantiate': 'manual' },
        ownerReferences: [{ apiVersion: 'batch/v1', kind: 'CronJob', name: 'tick', uid: '7d1dc582-d199-418a-b3b2-d66abfd228f9', controller: true }],
      },
      spec: {
        template: {
          metadata: {},
          spec: {
            containers: [{
              name: 'tick', image: 'busybox:1.36', command: ['date'], resources: {}, imagePullPolicy: 'IfNotPresent',
              terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File',
            }],
            restartPolicy: 'OnFailure', terminationGracePeriodSeconds: 30, dnsPolicy: 'ClusterFirst', securityContext: {}, schedulerName: 'default-scheduler',
          },
        },
      },
      status: {},
    },
  },
  {
    name: 'create pdb --min-available (IntOrString int, status counters without omitempty kept)', file: 'pdb-min-available',
    want: {
      apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'guard' },
      spec: { minAvailable: 1, selector: { matchLabels: { app: 'web' } } },
      status: { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 },
    },
  },
  {
    name: 'autoscale deployment web --cpu-percent=50 --min=1 --max=5 (autoscaling/v1 HPA; status counters without omitempty kept)', file: 'hpa-autoscale',
    want: {
      apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: { name: 'web' },
      spec: { scaleTargetRef: { kind: 'Deployment', name: 'web', apiVersion: 'apps/v1' }, minReplicas: 1, maxReplicas: 5, targetCPUUtilizationPercentage: 50 },
      status: { currentReplicas: 0, desiredReplicas: 0 },
    },
  },
  {
    name: 'create pdb --max-unavailable=25% with a set-based selector', file: 'pdb-max-unavailable',
    want: {
      apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'guard2' },
      spec: { maxUnavailable: '25%', selector: { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['a', 'b'] }] } },
      status: { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 },
    },
  },
  {
    name: 'debug node/n1 --image (a host-namespaces Pod pinned to the node)', file: 'pod-debug-node',
    want: {
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'node-debugger-n1-zp4n2' },
      spec: {
        volumes: [{ name: 'host-root', hostPath: { path: '/' } }],
        containers: [{ name: 'debugger', image: 'busybox:1.36', command: ['true'], resources: {}, volumeMounts: [{ name: 'host-root', mountPath: '/host' }], terminationMessagePolicy: 'File' }],
        restartPolicy: 'Never', nodeName: 'n1', hostNetwork: true, hostPID: true, hostIPC: true, tolerations: [{ operator: 'Exists' }],
      },
      status: {},
    },
  },
  {
    name: 'debug app --copy-to (the stored, defaulted Pod plus a container; pointer zero priority kept)', file: 'pod-debug-copy',
    want: {
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'app-debug', namespace: 'default' },
      spec: {
        containers: [
          { name: 'app', image: 'busybox:1.36', args: ['sleep', '3600'], resources: {}, terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File', imagePullPolicy: 'IfNotPresent' },
          { name: 'dbg', image: 'busybox:1.36', command: ['true'], resources: {}, terminationMessagePolicy: 'File' },
        ],
        restartPolicy: 'Always', terminationGracePeriodSeconds: 30, dnsPolicy: 'ClusterFirst', serviceAccountName: 'default', serviceAccount: 'default',
        securityContext: {}, schedulerName: 'default-scheduler',
        tolerations: [
          { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
          { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
        ],
        priority: 0, enableServiceLinks: true, preemptionPolicy: 'PreemptLowerPriority',
      },
      status: {},
    },
  },
  {
    name: 'create token --duration --audience', file: 'tokenrequest',
    want: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', metadata: {}, spec: { audiences: ['a1'], expirationSeconds: 600 }, status: { token: '' } },
  },
];

for (const tc of cases) {
  test(`decodes kubectl's ${tc.name}`, () => {
    assert.deepEqual(decodeKubernetesProtobuf(fixture(tc.file)), tc.want);
  });
}

// Every byte kubectl sends must be understood: a field missing from our schema would be skipped
// silently by the decoder, so re-encoding the decoded message would come out shorter.
const schemaRoot = (() => {
  const dir = new URL('./proto/', import.meta.url).pathname;
  const r = new protobuf.Root();
  r.resolvePath = (_o, t) => dir + t.split('/').pop();
  r.loadSync(['runtime', 'core', 'apps', 'authentication', 'authorization', 'rbac', 'scheduling', 'batch', 'policy', 'autoscaling'].map((f) => `${dir}${f}.proto`), { keepCase: true });
  return r.resolveAll();
})();
for (const tc of cases) {
  test(`the schema covers every field of ${tc.file}.pb`, () => {
    const body = fixture(tc.file).subarray(4);
    const unknown = schemaRoot.lookupType('k8s.io.apimachinery.pkg.runtime.Unknown').decode(body) as unknown as { raw: Uint8Array };
    const [group, version] = String(tc.want['apiVersion']).includes('/') ? String(tc.want['apiVersion']).split('/') : ['', String(tc.want['apiVersion'])];
    const type = schemaRoot.lookupType(`k8s.io.api.${group ? group.split('.')[0] : 'core'}.${version}.${String(tc.want['kind'])}`);
    assert.equal(type.encode(type.decode(unknown.raw)).finish().length, unknown.raw.length);
  });
}

// Shapes kubectl does not send but other protobuf clients do: encode with the schema, decode back.
test('converts IntOrString strings, Quantities, Times, pointer zeros, inlined embedded structs and maps of bytes', () => {
  const Deployment = schemaRoot.lookupType('k8s.io.api.apps.v1.Deployment');
  const raw = Deployment.encode(Deployment.fromObject({
    metadata: { name: 'd', generation: 0, creationTimestamp: { seconds: 1700000000 }, ownerReferences: [{ kind: 'X', name: 'x', uid: 'u', apiVersion: 'v1', controller: false }] },
    spec: {
      replicas: 0,
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: { type: 1, strVal: '25%' }, maxSurge: { type: 0, intVal: 1 } } },
      template: {
        spec: {
          terminationGracePeriodSeconds: 0,
          hostNetwork: false,
          containers: [{
            name: 'c', resources: { limits: { cpu: { string: '500m' } } },
            env: [{ name: 'A', valueFrom: { configMapKeyRef: { localObjectReference: { name: 'cm' }, key: 'k' } } }],
            readinessProbe: { handler: { httpGet: { path: '/', port: { type: 1, strVal: 'http' } } }, periodSeconds: 5 },
          }],
          volumes: [{ name: 'v', volumeSource: { configMap: { localObjectReference: { name: 'cm' }, defaultMode: 420 } } }],
        },
      },
    },
  })).finish();
  const Unknown = schemaRoot.lookupType('k8s.io.apimachinery.pkg.runtime.Unknown');
  const body = Buffer.concat([Buffer.from('k8s\0', 'binary'), Unknown.encode({ typeMeta: { apiVersion: 'apps/v1', kind: 'Deployment' }, raw }).finish()]);
  assert.deepEqual(decodeKubernetesProtobuf(body), {
    apiVersion: 'apps/v1', kind: 'Deployment',
    metadata: { name: 'd', creationTimestamp: '2023-11-14T22:13:20Z', ownerReferences: [{ kind: 'X', name: 'x', uid: 'u', apiVersion: 'v1', controller: false }] },
    spec: {
      replicas: 0,
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: 1 } },
      template: {
        spec: {
          terminationGracePeriodSeconds: 0,
          containers: [{
            name: 'c', resources: { limits: { cpu: '500m' } },
            env: [{ name: 'A', valueFrom: { configMapKeyRef: { name: 'cm', key: 'k' } } }],
            readinessProbe: { httpGet: { path: '/', port: 'http' }, periodSeconds: 5 },
          }],
          volumes: [{ name: 'v', configMap: { name: 'cm', defaultMode: 420 } }],
        },
      },
    },
  });
});

test('ConfigMap binaryData is base64, managedFields keep their FieldsV1 JSON', () => {
  const ConfigMap = schemaRoot.lookupType('k8s.io.api.core.v1.ConfigMap');
  const raw = ConfigMap.encode(ConfigMap.fromObject({
    metadata: { name: 'c', managedFields: [{ manager: 'm', operation: 'Apply', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { Raw: Buffer.from('{"f:data":{"f:a":{}}}') } }] },
    binaryData: { b: Buffer.from([0, 1, 2]) }, data: { a: '' }, immutable: false,
  })).finish();
  const Unknown = schemaRoot.lookupType('k8s.io.apimachinery.pkg.runtime.Unknown');
  const body = Buffer.concat([Buffer.from('k8s\0', 'binary'), Unknown.encode({ typeMeta: { apiVersion: 'v1', kind: 'ConfigMap' }, raw }).finish()]);
  assert.deepEqual(decodeKubernetesProtobuf(body), {
    apiVersion: 'v1', kind: 'ConfigMap', immutable: false, data: { a: '' }, binaryData: { b: 'AAEC' },
    metadata: { name: 'c', managedFields: [{ manager: 'm', operation: 'Apply', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:a': {} } } }] },
  });
});

test('malformed bodies and unknown kinds are 400 BadRequest', () => {
  const Unknown = schemaRoot.lookupType('k8s.io.apimachinery.pkg.runtime.Unknown');
  const envelope = (apiVersion: string, kind: string, raw: Uint8Array) =>
    Buffer.concat([Buffer.from('k8s\0', 'binary'), Unknown.encode({ typeMeta: { apiVersion, kind }, raw }).finish()]);
  for (const body of [
    Buffer.from('{"kind":"ConfigMap"}'),
    Buffer.concat([Buffer.from('k8s\0', 'binary'), Buffer.from([0x0a, 0x7f])]),
    envelope('v1', 'Frobnicator', new Uint8Array()),
    envelope('v1', '', new Uint8Array()),
    envelope('v1', 'ConfigMap', Buffer.from([0x0a, 0xff, 0xff, 0xff])),
  ]) {
    assert.throws(() => decodeKubernetesProtobuf(body), (e) => isBadRequest(e), body.toString('hex'));
  }
});
