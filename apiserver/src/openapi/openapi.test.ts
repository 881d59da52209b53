import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { RESOURCES, Pods, Deployments, Services, Nodes, ConfigMaps, type ResourceDescriptor } from '@mk8s/api';
import { registerOpenApi } from './register.js';
import { knownFieldsValidator } from './known-fields.js';
import { buildGroupVersionDocs } from './documents.js';

type Json = Record<string, any>;

async function app(resources: readonly ResourceDescriptor[] = RESOURCES) {
  const a = Fastify();
  registerOpenApi(a, { resources });
  await a.ready();
  return a;
}

/** What cli-runtime's query_param_verifier_v3 checks before it sends fieldValidation=Strict. */
function supportsFieldValidation(doc: Json, gvk: { group: string; version: string; kind: string }): boolean {
  for (const item of Object.values<Json>(doc.paths)) {
    const p = item.patch;
    const g = p?.['x-kubernetes-group-version-kind'];
    if (!g || g.group !== gvk.group || g.version !== gvk.version || g.kind !== gvk.kind) continue;
    return p.parameters.some((x: Json) => x.name === 'fieldValidation' && x.in === 'query');
  }
  return false;
}

describe('openapi v3', () => {
  test('the index lists every group/version with a hashed URL that serves its document', async (t) => {
    const a = await app(); t.after(() => a.close());
    const res = await a.inject({ url: '/openapi/v3?timeout=32s' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/json');
    const paths = res.json().paths as Record<string, { serverRelativeURL: string }>;
    assert.deepEqual(Object.keys(paths).sort(), ['api/v1', 'apis/apps/v1', 'apis/autoscaling/v1', 'apis/autoscaling/v2', 'apis/batch/v1', 'apis/certificates.k8s.io/v1', 'apis/coordination.k8s.io/v1', 'apis/discovery.k8s.io/v1', 'apis/events.k8s.io/v1', 'apis/policy/v1', 'apis/rbac.authorization.k8s.io/v1', 'apis/scheduling.k8s.io/v1', 'apis/storage.k8s.io/v1']);
    for (const [key, { serverRelativeURL }] of Object.entries(paths)) {
      assert.match(serverRelativeURL, new RegExp(`^/openapi/v3/${key.replace(/\./g, '\\.')}\\?hash=[0-9A-F]{128}$`));
      const doc = await a.inject({ url: `${serverRelativeURL}&timeout=32s`, headers: { accept: 'application/json' } });
      assert.equal(doc.statusCode, 200, key);
      assert.equal(doc.headers['cache-control'], 'public, immutable');
      assert.equal(doc.json().openapi, '3.0.0');
    }
    const stale = await a.inject({ url: '/openapi/v3/api/v1?hash=OLD' });
    assert.equal(stale.statusCode, 200);
    assert.equal(stale.headers['cache-control'], 'no-cache, private');
  });

  test('the hash changes when the document changes', () => {
    const h = (rs: readonly ResourceDescriptor[]) => buildGroupVersionDocs(rs).find((d) => d.key === 'api/v1')!.hash;
    assert.equal(h([Pods, Services]), h([Pods, Services]));
    assert.notEqual(h([Pods, Services]), h([Pods]));
  });

  for (const r of RESOURCES) {
    test(`${r.kind}: PATCH carries the GVK and fieldValidation, so kubectl validates server-side`, () => {
      const doc = buildGroupVersionDocs(RESOURCES).find((d) => d.group === r.group && d.version === r.version)!.document as Json;
      assert.ok(supportsFieldValidation(doc, { group: r.group, version: r.version, kind: r.kind }));
    });
  }

  test('apps/v1: patch content types, scale subresource, schemas tagged with their GVK', () => {
    const doc = buildGroupVersionDocs(RESOURCES).find((d) => d.key === 'apis/apps/v1')!.document as Json;
    const item = doc.paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}'];
    assert.deepEqual(Object.keys(item.patch.requestBody.content).sort(),
      ['application/apply-patch+yaml', 'application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json']);
    const scale = doc.paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale'];
    assert.deepEqual(scale.patch['x-kubernetes-group-version-kind'], { group: 'autoscaling', version: 'v1', kind: 'Scale' });
    const schemas = doc.components.schemas as Json;
    assert.deepEqual(schemas['io.k8s.api.apps.v1.Deployment']['x-kubernetes-group-version-kind'], [{ group: 'apps', version: 'v1', kind: 'Deployment' }]);
    assert.deepEqual(schemas['io.k8s.api.apps.v1.DeploymentList']['x-kubernetes-group-version-kind'], [{ group: 'apps', version: 'v1', kind: 'DeploymentList' }]);
    assert.ok(schemas['io.k8s.api.core.v1.PodTemplateSpec'], 'the pod template closure is included');
    assert.equal(schemas['io.k8s.api.core.v1.PodSpec'].properties.containers['x-kubernetes-patch-merge-key'], 'name');
    assert.equal(schemas['io.k8s.api.core.v1.PodSpec'].properties.containers['x-kubernetes-patch-strategy'], 'merge');
    assert.equal(schemas['io.k8s.api.core.v1.Container'].properties.ports['x-kubernetes-patch-merge-key'], 'containerPort');
  });

  test('every $ref resolves inside its own document', () => {
    for (const d of buildGroupVersionDocs(RESOURCES)) {
      const schemas = (d.document as Json).components.schemas as Json;
      const refs = JSON.stringify(d.document).match(/"\$ref":"#\/components\/schemas\/[^"]+"/g) ?? [];
      for (const r of refs) {
        const name = r.slice('"$ref":"#/components/schemas/'.length, -1);
        assert.ok(schemas[name], `${d.key}: dangling ${name}`);
      }
    }
  });

  test('core/v1 describes pod.spec.containers for kubectl explain', () => {
    const doc = buildGroupVersionDocs(RESOURCES).find((d) => d.key === 'api/v1')!.document as Json;
    const s = doc.components.schemas as Json;
    const pod = s['io.k8s.api.core.v1.Pod'];
    assert.deepEqual(pod['x-kubernetes-group-version-kind'], [{ group: '', version: 'v1', kind: 'Pod' }]);
    assert.equal(pod.properties.spec.allOf[0].$ref, '#/components/schemas/io.k8s.api.core.v1.PodSpec');
    const containers = s['io.k8s.api.core.v1.PodSpec'].properties.containers;
    assert.equal(containers.type, 'array');
    assert.match(containers.description, /containers/i);
    assert.deepEqual(s['io.k8s.api.core.v1.Container'].required, ['name']);
  });

  test('a group nobody generated schemas for still gets a document', () => {
    const fake: ResourceDescriptor = { ...Pods, group: 'metrics.k8s.io', version: 'v1beta1', kind: 'PodMetrics', listKind: 'PodMetricsList', resource: 'pods', subresources: [], verbs: ['get', 'list'] };
    const doc = buildGroupVersionDocs([fake])[0]!;
    assert.equal(doc.key, 'apis/metrics.k8s.io/v1beta1');
    const s = (doc.document as Json).components.schemas as Json;
    assert.ok(s['io.k8s.api.metrics.v1beta1.PodMetrics']['x-kubernetes-preserve-unknown-fields']);
    assert.deepEqual(knownFieldsValidator(fake)({ anything: 1 }), []);
  });

  test('/openapi/v2: a definition-less protobuf document for kubectl, 404 otherwise', async (t) => {
    const a = await app(); t.after(() => a.close());
    const res = await a.inject({ url: '/openapi/v2?timeout=32s' });
    assert.equal(res.statusCode, 404);
    assert.equal(res.json().reason, 'NotFound');
    const pb = await a.inject({ url: '/openapi/v2?timeout=32s', headers: { accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf' } });
    assert.equal(pb.statusCode, 200);
    assert.equal(pb.headers['content-type'], 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
    // field 1 (swagger) = "2.0", then info (2) and an empty paths (8).
    assert.deepEqual([...pb.rawPayload.subarray(0, 5)], [0x0a, 3, 0x32, 0x2e, 0x30]);
    assert.deepEqual([...pb.rawPayload.subarray(-2)], [0x42, 0]);
  });
});

describe('knownFieldsValidator', () => {
  const deployment = {
    apiVersion: 'apps/v1', kind: 'Deployment',
    metadata: { name: 'web', labels: { app: 'web' }, annotations: { 'a/b': 'c' },
      managedFields: [{ manager: 'kubectl', operation: 'Update', fieldsV1: { 'f:spec': { 'f:replicas': {} } } }] },
    spec: {
      replicas: 2, selector: { matchLabels: { app: 'web' } }, strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: 0 } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { containers: [{ name: 'nginx', image: 'nginx', ports: [{ containerPort: 80 }], resources: { limits: { cpu: '100m' } },
          env: [{ name: 'A', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } }] }] },
      },
    },
    status: { replicas: 2, conditions: [{ type: 'Available', status: 'True' }] },
  };
  const cases: { name: string; r: ResourceDescriptor; obj: unknown; want: string[] }[] = [
    { name: 'a full deployment is clean', r: Deployments, obj: deployment, want: [] },
    { name: 'unknown spec field', r: Deployments, obj: { ...deployment, spec: { ...deployment.spec, foo: 1 } }, want: ['spec.foo'] },
    { name: 'unknown top-level field', r: Deployments, obj: { ...deployment, extra: true }, want: ['extra'] },
    { name: 'typo inside a list item', r: Pods, obj: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' },
      spec: { containers: [{ name: 'a', image: 'x' }, { name: 'b', imagee: 'x', ports: [{ containerPort: 1, hostport: 2 }] }] } },
      want: ['spec.containers[1].imagee', 'spec.containers[1].ports[0].hostport'] },
    { name: 'unknown metadata field', r: ConfigMaps, obj: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', labelz: {} }, data: { any: 'key' } }, want: ['metadata.labelz'] },
    { name: 'map keys are free, int-or-string accepts both', r: Services, obj: { apiVersion: 'v1', kind: 'Service', metadata: { name: 's' },
      spec: { selector: { whatever: 'x' }, ports: [{ port: 80, targetPort: 'http' }, { port: 81, targetPort: 8080 }] } }, want: [] },
    { name: 'strategic-merge-patch directives are not fields', r: Deployments, obj: { spec: { template: { spec: {
      '$setElementOrder/containers': [{ name: 'nginx' }], containers: [{ name: 'nginx', $patch: 'delete', '$deleteFromPrimitiveList/args': ['x'] }], $retainKeys: ['containers'] } } } },
      want: [] },
    { name: 'node status', r: Nodes, obj: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n' },
      status: { capacity: { cpu: '2' }, nodeInfo: { kubeletVersion: 'v1', bogus: 1 } } }, want: ['status.nodeInfo.bogus'] },
  ];
  for (const tc of cases) test(tc.name, () => assert.deepEqual(knownFieldsValidator(tc.r)(tc.obj), tc.want));
});
