import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '@mk8s/api';
import {
  configMapObject, containerNameFromImage, deploymentObject, exposeServiceObject, jobObject, namespaceObject, parseEnvFile,
  runPodObject, secretDockerRegistryObject, secretGenericObject, secretTlsObject, serviceObject,
} from './generators.js';

// The objects kubectl 1.32 prints for the same command with `--dry-run=client -o json`.
const cases: { name: string; got: () => unknown; want: unknown }[] = [
  {
    name: 'create namespace x', got: () => namespaceObject('x'),
    want: { apiVersion: 'v1', kind: 'Namespace', metadata: { creationTimestamp: null, name: 'x' }, spec: {}, status: {} },
  },
  {
    name: 'create deployment web --image=registry.local/team/nginx:1.25 --replicas=2 --port=80 -- nginx -g off',
    got: () => deploymentObject('web', { images: ['registry.local/team/nginx:1.25'], replicas: 2, port: 80, command: ['nginx', '-g', 'off'] }),
    want: {
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: { creationTimestamp: null, labels: { app: 'web' }, name: 'web' },
      spec: {
        replicas: 2, selector: { matchLabels: { app: 'web' } }, strategy: {},
        template: { metadata: { creationTimestamp: null, labels: { app: 'web' } }, spec: { containers: [{ command: ['nginx', '-g', 'off'], image: 'registry.local/team/nginx:1.25', name: 'nginx', ports: [{ containerPort: 80 }], resources: {} }] } },
      },
      status: {},
    },
  },
  {
    name: 'create configmap c --from-literal=b=2 --from-literal=a=1 --from-file=bin=<binary> --from-env-file',
    got: () => configMapObject('c', { literals: ['b=2', 'a=1=x'], files: [{ key: 'bin', content: Buffer.from([0xff, 0x00]) }], envFiles: ['# comment\nE=3\n\n'] }),
    want: { apiVersion: 'v1', binaryData: { bin: '/wA=' }, data: { E: '3', a: '1=x', b: '2' }, kind: 'ConfigMap', metadata: { creationTimestamp: null, name: 'c' } },
  },
  {
    name: 'create secret generic s --from-literal=user=admin --type=Opaque',
    got: () => secretGenericObject('s', { literals: ['user=admin'] }, 'Opaque'),
    want: { apiVersion: 'v1', data: { user: 'YWRtaW4=' }, kind: 'Secret', metadata: { creationTimestamp: null, name: 's' }, type: 'Opaque' },
  },
  {
    name: 'create secret tls t --cert --key',
    got: () => secretTlsObject('t', Buffer.from('CERT'), Buffer.from('KEY')),
    want: { apiVersion: 'v1', data: { 'tls.crt': 'Q0VSVA==', 'tls.key': 'S0VZ' }, kind: 'Secret', metadata: { creationTimestamp: null, name: 't' }, type: 'kubernetes.io/tls' },
  },
  {
    name: 'create secret docker-registry r --docker-username=u --docker-password=p --docker-email=e@x',
    got: () => secretDockerRegistryObject('r', { username: 'u', password: 'p', email: 'e@x' }),
    want: {
      apiVersion: 'v1', kind: 'Secret', metadata: { creationTimestamp: null, name: 'r' }, type: 'kubernetes.io/dockerconfigjson',
      data: { '.dockerconfigjson': Buffer.from('{"auths":{"https://index.docker.io/v1/":{"username":"u","password":"p","email":"e@x","auth":"dTpw"}}}').toString('base64') },
    },
  },
  {
    name: 'create service clusterip s --tcp=80:8080 --tcp=443',
    got: () => serviceObject('s', { type: 'ClusterIP', tcp: ['80:8080', '443'] }),
    want: {
      apiVersion: 'v1', kind: 'Service', metadata: { creationTimestamp: null, labels: { app: 's' }, name: 's' },
      spec: { ports: [{ name: '80-8080', port: 80, protocol: 'TCP', targetPort: 8080 }, { name: '443-443', port: 443, protocol: 'TCP', targetPort: 443 }], selector: { app: 's' }, type: 'ClusterIP' },
      status: { loadBalancer: {} },
    },
  },
  {
    name: 'create service nodeport n --tcp=80:http --node-port=30080',
    got: () => serviceObject('n', { type: 'NodePort', tcp: ['80:http'], nodePort: 30080 }),
    want: {
      apiVersion: 'v1', kind: 'Service', metadata: { creationTimestamp: null, labels: { app: 'n' }, name: 'n' },
      spec: { ports: [{ name: '80-http', nodePort: 30080, port: 80, protocol: 'TCP', targetPort: 'http' }], selector: { app: 'n' }, type: 'NodePort' },
      status: { loadBalancer: {} },
    },
  },
  {
    name: 'create job j --image=busybox -- date',
    got: () => jobObject('j', { image: 'busybox', command: ['date'] }),
    want: {
      apiVersion: 'batch/v1', kind: 'Job', metadata: { creationTimestamp: null, name: 'j' },
      spec: { template: { metadata: { creationTimestamp: null }, spec: { containers: [{ command: ['date'], image: 'busybox', name: 'j', resources: {} }], restartPolicy: 'Never' } } },
      status: {},
    },
  },
  {
    name: 'run p --image=busybox --port=80 --env=A=1 --labels=a=b -- sleep 10',
    got: () => runPodObject('p', { image: 'busybox', port: 80, env: ['A=1'], labels: 'a=b', args: ['sleep', '10'] }),
    want: {
      apiVersion: 'v1', kind: 'Pod', metadata: { creationTimestamp: null, labels: { a: 'b' }, name: 'p' },
      spec: { containers: [{ args: ['sleep', '10'], env: [{ name: 'A', value: '1' }], image: 'busybox', name: 'p', ports: [{ containerPort: 80 }], resources: {} }], dnsPolicy: 'ClusterFirst', restartPolicy: 'Always' },
      status: {},
    },
  },
  {
    name: 'run p --image=busybox --restart=Never --command -- sh -c true',
    got: () => runPodObject('p', { image: 'busybox', restart: 'Never', command: true, args: ['sh', '-c', 'true'] }),
    want: {
      apiVersion: 'v1', kind: 'Pod', metadata: { creationTimestamp: null, labels: { run: 'p' }, name: 'p' },
      spec: { containers: [{ command: ['sh', '-c', 'true'], image: 'busybox', name: 'p', resources: {} }], dnsPolicy: 'ClusterFirst', restartPolicy: 'Never' },
      status: {},
    },
  },
];

for (const tc of cases) {
  test(`generates what kubectl sends for: ${tc.name}`, () => assert.deepEqual(tc.got(), tc.want));
}

test('container names from images: last path element, no tag or digest; . and _ become - plus a suffix', () => {
  assert.equal(containerNameFromImage('nginx'), 'nginx');
  assert.equal(containerNameFromImage('reg:5000/a/b:1.0'), 'b');
  assert.equal(containerNameFromImage('busybox@sha256:abc'), 'busybox');
  assert.equal(containerNameFromImage('my_app.v2:1', () => 'xyz12'), 'my-app-v2-xyz12');
});

test('env files: comments and blank lines skipped, the first = splits', () => {
  assert.deepEqual(parseEnvFile('# c\n\nA=1\n  B=x=y\nBARE\n'), [['A', '1'], ['B', 'x=y']]);
});

test('a key given twice is an error', () => {
  assert.throws(() => configMapObject('c', { literals: ['a=1', 'a=2'] }), /cannot add key a/);
});

const deploy = (ports: number[]): KubeObject => ({
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', labels: { team: 'x' } },
  spec: { selector: { matchLabels: { app: 'web' } }, template: { spec: { containers: [{ name: 'c', image: 'i', ports: ports.map((p) => ({ containerPort: p })) }] } } },
} as unknown as KubeObject);

test('expose deployment web --port=80 --target-port=8080: the selector and labels of the deployment', () => {
  assert.deepEqual(exposeServiceObject(deploy([]), { port: '80', targetPort: '8080' }), {
    apiVersion: 'v1', kind: 'Service', metadata: { creationTimestamp: null, labels: { team: 'x' }, name: 'web' },
    spec: { ports: [{ port: 80, protocol: 'TCP', targetPort: 8080 }], selector: { app: 'web' } },
    status: { loadBalancer: {} },
  });
});

test('expose without --port takes the container ports, naming them when there are several', () => {
  const svc = exposeServiceObject(deploy([8080, 9090]), { name: 'metrics', type: 'NodePort' }) as unknown as { metadata: { name: string }; spec: { ports: unknown[]; type: string } };
  assert.equal(svc.metadata.name, 'metrics');
  assert.equal(svc.spec.type, 'NodePort');
  assert.deepEqual(svc.spec.ports, [{ name: 'port-1', port: 8080, protocol: 'TCP', targetPort: 8080 }, { name: 'port-2', port: 9090, protocol: 'TCP', targetPort: 9090 }]);
  assert.throws(() => exposeServiceObject(deploy([]), {}), /couldn't find port/);
});

test('expose pod: its labels are the selector', () => {
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', labels: { run: 'p' } }, spec: { containers: [{ name: 'p', image: 'i', ports: [{ containerPort: 80 }] }] } } as unknown as KubeObject;
  const svc = exposeServiceObject(pod, {}) as unknown as { spec: { selector: unknown; ports: unknown[] } };
  assert.deepEqual(svc.spec.selector, { run: 'p' });
  assert.deepEqual(svc.spec.ports, [{ port: 80, protocol: 'TCP', targetPort: 80 }]);
});
