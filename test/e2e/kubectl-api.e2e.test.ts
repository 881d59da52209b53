/**
 * Issue 2's acceptance with the real kubectl: discovery, apply of a multi-document file and
 * re-apply after an edit, tables and output formats, watch, label/annotate/patch/replace/delete.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { kubectl, kubectlOk, kubectlStream, uniqueName, waitFor } from './lib/cluster.js';

const ns = uniqueName('e2e-api');

const manifest = (replicas: number, withEnv: boolean) => `
apiVersion: v1
kind: Namespace
metadata:
  name: ${ns}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: web-config
  namespace: ${ns}
data:
  greeting: hello
---
apiVersion: v1
kind: Secret
metadata:
  name: web-secret
  namespace: ${ns}
stringData:
  password: s3cret
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: ${ns}
  labels: { app: web }
spec:
  replicas: ${replicas}
  selector: { matchLabels: { app: web } }
  template:
    metadata: { labels: { app: web } }
    spec:
      containers:
      - name: web
        image: mk8s/testserver:1.0
        ports: [{ containerPort: 8080 }]
${withEnv ? '        env: [{ name: MODE, value: demo }]\n' : ''}---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: ${ns}
spec:
  selector: { app: web }
  ports: [{ port: 80, targetPort: 8080 }]
`;

describe('real kubectl against the apiserver', () => {
  before(() => { kubectl(['delete', 'namespace', ns, '--ignore-not-found', '--wait=false']); });
  after(() => { kubectl(['delete', 'namespace', ns, '--ignore-not-found', '--wait=false']); });

  test('api-resources lists the served resources with short names', () => {
    const out = kubectlOk(['api-resources']);
    for (const r of ['pods', 'services', 'deployments', 'replicasets', 'namespaces', 'nodes', 'configmaps', 'secrets', 'events', 'leases', 'endpointslices']) {
      assert.match(out, new RegExp(`^${r}\\s`, 'm'), `api-resources lacks ${r}`);
    }
    assert.match(out, /^deployments\s+deploy\s+apps\/v1\s+true\s+Deployment/m);
  });

  test('apply -f creates every object of a multi-document file', () => {
    const out = kubectlOk(['apply', '-f', '-'], { input: manifest(1, true) });
    assert.match(out, new RegExp(`namespace/${ns} created`));
    assert.match(out, /configmap\/web-config created/);
    assert.match(out, /secret\/web-secret created/);
    assert.match(out, /deployment.apps\/web created/);
    assert.match(out, /service\/web created/);
  });

  test('apply -f again after an edit reports configured and removes a field dropped from the file', () => {
    const out = kubectlOk(['apply', '-f', '-'], { input: manifest(2, false) });
    assert.match(out, /deployment.apps\/web configured/);
    assert.match(out, /configmap\/web-config unchanged/);
    const d = JSON.parse(kubectlOk(['get', 'deploy', 'web', '-n', ns, '-o', 'json']));
    assert.equal(d.spec.replicas, 2);
    assert.equal(d.spec.template.spec.containers[0].env, undefined, 'env removed from the file must be removed from the object');
    assert.ok(d.metadata.generation >= 2);
  });

  test('get prints server-side tables with kubectl\'s columns', () => {
    assert.match(kubectlOk(['get', 'deploy', '-n', ns]), /^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE/m);
    assert.match(kubectlOk(['get', 'svc', '-n', ns]), /^NAME\s+TYPE\s+CLUSTER-IP\s+EXTERNAL-IP\s+PORT\(S\)\s+AGE/m);
    assert.match(kubectlOk(['get', 'cm', '-n', ns]), /^NAME\s+DATA\s+AGE/m);
    assert.match(kubectlOk(['get', 'secrets', '-n', ns]), /^NAME\s+TYPE\s+DATA\s+AGE/m);
    assert.match(kubectlOk(['get', 'ns']), /^NAME\s+STATUS\s+AGE/m);
    assert.match(kubectlOk(['get', 'deploy', '-n', ns, '-o', 'wide']), /CONTAINERS\s+IMAGES\s+SELECTOR/);
    assert.match(kubectlOk(['get', 'deploy', '-A']), new RegExp(`^${ns}\\s+web\\s`, 'm'));
    assert.match(kubectlOk(['get', 'deploy', '-n', ns, '--show-labels']), /app=web/);
    assert.equal(kubectlOk(['get', 'deploy', '-n', ns, '-o', 'name']).trim(), 'deployment.apps/web');
    assert.match(kubectlOk(['get', 'deploy', 'web', '-n', ns, '-o', 'yaml']), /^kind: Deployment$/m);
    assert.match(kubectlOk(['get', 'deploy', '-n', ns, '-l', 'app=web', '-o', 'name']), /deployment.apps\/web/);
    assert.equal(kubectlOk(['get', 'deploy', '-n', ns, '-l', 'app=nope', '-o', 'name']).trim(), '');
    for (const r of ['pods', 'replicasets', 'endpoints', 'events', 'serviceaccounts', 'nodes', 'leases', 'endpointslices']) kubectlOk(['get', r, '-A']);
  });

  test('label, annotate and the three patch types change the object', () => {
    kubectlOk(['label', 'cm', 'web-config', '-n', ns, 'tier=front']);
    kubectlOk(['annotate', 'cm', 'web-config', '-n', ns, 'note=hi']);
    kubectlOk(['patch', 'cm', 'web-config', '-n', ns, '--type=merge', '-p', '{"data":{"a":"1"}}']);
    kubectlOk(['patch', 'cm', 'web-config', '-n', ns, '--type=json', '-p', '[{"op":"add","path":"/data/b","value":"2"}]']);
    kubectlOk(['patch', 'deploy', 'web', '-n', ns, '-p', '{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"mk8s/testserver:1.1"}]}}}}']);
    const cm = JSON.parse(kubectlOk(['get', 'cm', 'web-config', '-n', ns, '-o', 'json']));
    assert.equal(cm.metadata.labels.tier, 'front');
    assert.equal(cm.metadata.annotations.note, 'hi');
    assert.deepEqual({ a: cm.data.a, b: cm.data.b, greeting: cm.data.greeting }, { a: '1', b: '2', greeting: 'hello' });
    const d = JSON.parse(kubectlOk(['get', 'deploy', 'web', '-n', ns, '-o', 'json']));
    assert.equal(d.spec.template.spec.containers.length, 1, 'strategic merge keeps one container by name');
    assert.equal(d.spec.template.spec.containers[0].image, 'mk8s/testserver:1.1');
    kubectlOk(['label', 'cm', 'web-config', '-n', ns, 'tier-']);
    assert.equal(JSON.parse(kubectlOk(['get', 'cm', 'web-config', '-n', ns, '-o', 'json'])).metadata.labels?.tier, undefined);
  });

  test('replace swaps the whole object; a stale resourceVersion is a conflict', () => {
    const cm = JSON.parse(kubectlOk(['get', 'cm', 'web-config', '-n', ns, '-o', 'json']));
    cm.data = { only: 'this' };
    kubectlOk(['replace', '-f', '-'], { input: JSON.stringify(cm) });
    assert.deepEqual(JSON.parse(kubectlOk(['get', 'cm', 'web-config', '-n', ns, '-o', 'json'])).data, { only: 'this' });
    const r = kubectl(['replace', '-f', '-'], { input: JSON.stringify(cm) });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /Conflict|modified/);
  });

  test('get -w prints changes as they happen', async () => {
    const w = kubectlStream(['get', 'cm', '-n', ns, '-w']);
    try {
      await waitFor(() => w.output().includes('web-config'), { what: 'initial list' });
      kubectlOk(['apply', '-f', '-'], { input: `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: watched, namespace: ${ns}}\ndata: {x: "1"}\n` });
      await waitFor(() => /watched/.test(w.output()), { what: 'watch event for the new ConfigMap' });
    } finally { await w.stop(); }
  });

  test('errors come back as Kubernetes Status messages', () => {
    const nf = kubectl(['get', 'cm', 'nope', '-n', ns]);
    assert.notEqual(nf.code, 0);
    assert.match(nf.stderr, /Error from server \(NotFound\): configmaps "nope" not found/);
    const inv = kubectl(['apply', '-f', '-'], { input: `apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: bad, namespace: ${ns}}\nspec:\n  replicas: -1\n  selector: {matchLabels: {app: x}}\n  template:\n    metadata: {labels: {app: y}}\n    spec: {containers: [{name: c, image: busybox}]}\n` });
    assert.notEqual(inv.code, 0);
    assert.match(inv.stderr, /is invalid/);
    assert.match(inv.stderr, /spec.replicas/);
  });

  test('delete -f and delete by name remove objects', () => {
    kubectlOk(['delete', 'cm', 'watched', '-n', ns]);
    assert.equal(kubectl(['get', 'cm', 'watched', '-n', ns]).code, 1);
    const out = kubectlOk(['delete', '-f', '-', '--wait=false'], { input: manifest(2, false).split('---').slice(1).join('---') });
    assert.match(out, /deployment.apps "web" deleted/);
    assert.match(out, /service "web" deleted/);
  });
});
