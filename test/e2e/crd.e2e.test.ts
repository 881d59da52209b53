/**
 * CustomResourceDefinitions on the real cluster (issue 19), with the real kubectl and
 * @kubernetes/client-node: apply a CRD with a schema, printer columns, status and scale
 * subresources; wait for Established; create, get (columns), watch, patch (merge, json, apply),
 * scale and explain a custom object; a value outside the schema is a 422 naming the field, an
 * unknown field is pruned, a default is applied; KubernetesObjectApi creates and lists, an
 * informer sees add/update/delete; deleting the CRD deletes its objects. The controller-manager finds
 * custom resources by discovery: the garbage collector collects a custom object whose owner (a
 * ConfigMap) is deleted, and deleting a namespace deletes its custom objects before it goes.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import { KUBECONFIG, kubectl, kubectlOk, kubectlStream, uniqueName, waitFor } from './lib/cluster.js';

const ns = uniqueName('e2e-crd');
const CRD = 'widgets.e2e.example.com';
const k = (args: string[], input?: string) => kubectlOk(['-n', ns, ...args], input === undefined ? {} : { input });

const crdManifest = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: { name: ${CRD} }
spec:
  group: e2e.example.com
  scope: Namespaced
  names: { plural: widgets, singular: widget, kind: Widget, shortNames: [wd] }
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale: { specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas }
    additionalPrinterColumns:
    - { name: Color, type: string, jsonPath: .spec.color }
    - { name: Replicas, type: integer, jsonPath: .spec.replicas }
    - { name: Age, type: date, jsonPath: .metadata.creationTimestamp }
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [color]
            properties:
              color: { type: string, enum: [red, green, blue], description: The widget's color. }
              size: { type: string, default: medium }
              replicas: { type: integer, minimum: 0, maximum: 5, default: 1 }
          status:
            type: object
            properties:
              replicas: { type: integer }
`;

const widget = (name: string, spec: string) => `apiVersion: e2e.example.com/v1\nkind: Widget\nmetadata: { name: ${name} }\nspec: ${spec}\n`;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const jsonOf = (...args: string[]) => JSON.parse(k([...args, '-o', 'json'])) as Record<string, any>;

describe('CustomResourceDefinitions', () => {
  before(() => { kubectlOk(['create', 'namespace', ns]); });
  after(() => {
    kubectl(['delete', 'crd', CRD, '--ignore-not-found', '--wait=false']);
    kubectl(['delete', 'namespace', ns, '--wait=false']);
  });

  test('apply a CRD and wait for Established', () => {
    assert.match(kubectlOk(['apply', '-f', '-'], { input: crdManifest }), new RegExp(`customresourcedefinition.apiextensions.k8s.io/${CRD} created`));
    kubectlOk(['wait', '--for=condition=Established', '--timeout=60s', `crd/${CRD}`]);
    assert.match(kubectlOk(['api-resources', '--api-group=e2e.example.com']), /^widgets\s+wd\s+e2e\.example\.com\/v1\s+true\s+Widget$/m);
  });

  test('create, get with columns, defaults and pruning, patch, apply, scale, explain', async () => {
    const watch = kubectlStream(['-n', ns, 'get', 'widgets', '--watch', '-o', 'name']);
    try {
      // Strict validation (kubectl's default) refuses the unknown field; without it, it is pruned.
      const strict = kubectl(['-n', ns, 'apply', '-f', '-'], { input: widget('w1', '{ color: red, extra: dropped }') });
      assert.match(strict.stderr, /strict decoding error: unknown field "spec.extra"/);
      assert.match(k(['apply', '--validate=false', '-f', '-'], widget('w1', '{ color: red, extra: dropped }')), /widget.e2e.example.com\/w1 created/);
      const w1 = jsonOf('get', 'widget', 'w1');
      assert.equal(w1.spec.size, 'medium', 'default applied');
      assert.equal(w1.spec.replicas, 1);
      assert.equal(w1.spec.extra, undefined, 'unknown field pruned');
      assert.match(k(['get', 'widgets']), /^NAME\s+COLOR\s+REPLICAS\s+AGE\nw1\s+red\s+1\s+\d+s$/m);
      await waitFor(() => watch.output().includes('widget.e2e.example.com/w1'), { timeoutMs: 30_000, what: 'the watch to see w1' });
    } finally {
      await watch.stop();
    }
    k(['patch', 'widget', 'w1', '--type=merge', '-p', '{"spec":{"color":"green"}}']);
    k(['patch', 'widget', 'w1', '--type=json', '-p', '[{"op":"replace","path":"/spec/size","value":"large"}]']);
    k(['apply', '--server-side', '--force-conflicts', '-f', '-'], widget('w1', '{ color: blue, size: large }'));
    const patched = jsonOf('get', 'wd', 'w1');
    assert.equal(patched.spec.color, 'blue');
    assert.equal(patched.spec.size, 'large');
    assert.match(k(['scale', 'widget/w1', '--replicas=3']), /widget.e2e.example.com\/w1 scaled/);
    assert.equal(jsonOf('get', 'widget', 'w1').spec.replicas, 3);
    const explain = kubectlOk(['explain', 'widgets.spec.color']);
    assert.match(explain, /KIND:\s+Widget/);
    assert.match(explain, /The widget's color\./);
  });

  test('a value outside the schema is refused with the field named', () => {
    const r = kubectl(['-n', ns, 'apply', '-f', '-'], { input: widget('w2', '{ color: purple, replicas: 9 }') });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /The Widget "w2" is invalid/);
    assert.match(r.stderr, /spec\.color: Unsupported value: "purple": supported values: "red", "green", "blue"/);
    assert.match(r.stderr, /spec\.replicas: Invalid value: 9: spec\.replicas in body should be less than or equal to 5/);
  });

  test('client-node: KubernetesObjectApi creates and lists; an informer sees add, update and delete', async () => {
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(KUBECONFIG);
    const objects = k8s.KubernetesObjectApi.makeApiClient(kc);
    const custom = kc.makeApiClient(k8s.CustomObjectsApi);
    const seen: string[] = [];
    const informer = k8s.makeInformer(kc, `/apis/e2e.example.com/v1/namespaces/${ns}/widgets`,
      () => custom.listNamespacedCustomObject({ group: 'e2e.example.com', version: 'v1', namespace: ns, plural: 'widgets' }) as Promise<k8s.KubernetesListObject<k8s.KubernetesObject>>);
    informer.on('add', (o) => seen.push(`add ${o.metadata?.name}`));
    informer.on('update', (o) => seen.push(`update ${o.metadata?.name}`));
    informer.on('delete', (o) => seen.push(`delete ${o.metadata?.name}`));
    await informer.start();
    try {
      const body = { apiVersion: 'e2e.example.com/v1', kind: 'Widget', metadata: { name: 'js', namespace: ns }, spec: { color: 'red' } };
      const created = await objects.create(body) as unknown as { spec: { size: string } };
      assert.equal(created.spec.size, 'medium');
      const list = await objects.list('e2e.example.com/v1', 'Widget', ns);
      assert.ok(list.items.some((o) => o.metadata?.name === 'js'));
      await waitFor(() => seen.includes('add js'), { timeoutMs: 30_000, what: 'informer add' });
      await objects.patch({ ...body, spec: { color: 'green' } }, undefined, undefined, 'e2e', true, k8s.PatchStrategy.ServerSideApply);
      await waitFor(() => seen.includes('update js'), { timeoutMs: 30_000, what: 'informer update' });
      await objects.delete(body);
      await waitFor(() => seen.includes('delete js'), { timeoutMs: 30_000, what: 'informer delete' });
    } finally {
      await informer.stop();
    }
  });

  test('deleting the CRD deletes its objects and stops serving them', async () => {
    kubectlOk(['delete', 'crd', CRD, '--timeout=120s']);
    await waitFor(() => kubectl(['get', 'crd', CRD]).code !== 0, { timeoutMs: 60_000, what: 'the CRD gone' });
    const r = kubectl(['-n', ns, 'get', 'widgets']);
    assert.notEqual(r.code, 0);
    // Re-created, nothing of the old objects comes back.
    kubectlOk(['apply', '-f', '-'], { input: crdManifest });
    kubectlOk(['wait', '--for=condition=Established', '--timeout=60s', `crd/${CRD}`]);
    await waitFor(() => kubectl(['-n', ns, 'get', 'widgets', '-o', 'name']).code === 0, { timeoutMs: 30_000, what: 'widgets served again' });
    assert.equal(k(['get', 'widgets', '-o', 'name']).trim(), '');
  });

  test('garbage collector: a custom object owned by a ConfigMap is collected once the ConfigMap is deleted', async () => {
    k(['create', 'configmap', 'owner']);
    const uid = jsonOf('get', 'configmap', 'owner').metadata.uid as string;
    k(['apply', '-f', '-'], `apiVersion: e2e.example.com/v1\nkind: Widget\nmetadata:\n  name: owned\n  ownerReferences: [{ apiVersion: v1, kind: ConfigMap, name: owner, uid: ${uid} }]\nspec: { color: red }\n`);
    k(['delete', 'configmap', 'owner']);
    // Discovery is re-read every 30 s: the collector may need one resync to watch widgets.
    await waitFor(() => kubectl(['-n', ns, 'get', 'widget', 'owned', '-o', 'name']).stderr.includes('NotFound'), { timeoutMs: 120_000, intervalMs: 1000, what: 'the owned widget collected' });
  });

  test('namespace deletion deletes the custom objects in it, then the namespace goes', async () => {
    const other = uniqueName('e2e-crd-ns');
    kubectlOk(['create', 'namespace', other]);
    try {
      kubectlOk(['-n', other, 'apply', '-f', '-'], { input: widget('inside', '{ color: green }') });
      kubectlOk(['delete', 'namespace', other, '--wait=false']);
      await waitFor(() => kubectl(['get', 'namespace', other, '-o', 'name']).stderr.includes('NotFound'), { timeoutMs: 120_000, intervalMs: 1000, what: `namespace ${other} gone` });
      const all = kubectlOk(['get', 'widgets', '--all-namespaces', '-o', 'jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.name}{"\\n"}{end}']);
      assert.ok(!all.includes(`${other}/`), `no widget left in ${other}: ${all}`);
    } finally {
      kubectl(['delete', 'namespace', other, '--ignore-not-found', '--wait=false']);
    }
  });
});
