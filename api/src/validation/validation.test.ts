import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Pods, Services, Deployments, ReplicaSets, Namespaces, Nodes, Secrets, ConfigMaps, Leases, EndpointSlices, PriorityClasses, Events } from '../scheme.js';
import { applyDefaults } from '../defaults/defaults.js';
import { isInvalid } from '../errors.js';
import { validateObject, toStatusCauses, invalidError } from './index.js';
import { goValue } from './field.js';
import type { ResourceDescriptor } from '../scheme.js';

const pod = (spec: Record<string, unknown> = {}, meta: Record<string, unknown> = {}) =>
  applyDefaults(Pods, { metadata: { name: 'p', namespace: 'default', ...meta }, spec: { containers: [{ name: 'c', image: 'nginx:1.26' }], ...spec } });
const deploy = (spec: Record<string, unknown> = {}) => applyDefaults(Deployments, {
  metadata: { name: 'web', namespace: 'default' },
  spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'nginx', image: 'nginx:1.26' }] } }, ...spec },
});
const svc = (spec: Record<string, unknown> = {}, name = 'web') => applyDefaults(Services, { metadata: { name, namespace: 'default' }, spec: { selector: { app: 'web' }, ports: [{ port: 80 }], ...spec } });

const SUBDOMAIN_MSG = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MSG = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS1035_MSG = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

interface Case { name: string; r: ResourceDescriptor; obj: unknown; old?: unknown; want: string[] }

const cases: Case[] = [
  { name: 'valid pod', r: Pods, obj: pod(), want: [] },
  { name: 'pod name not a subdomain', r: Pods, obj: pod({}, { name: 'Bad_Name' }), want: [`metadata.name: Invalid value: "Bad_Name": ${SUBDOMAIN_MSG}`] },
  { name: 'pod without name', r: Pods, obj: pod({}, { name: '' }), want: ['metadata.name: Required value: name or generateName is required'] },
  { name: 'generateName may end in a dash', r: Pods, obj: pod({}, { name: 'web-abcde', generateName: 'web-' }), want: [] },
  { name: 'bad generateName', r: Pods, obj: pod({}, { name: 'x', generateName: 'Web-' }), want: [`metadata.generateName: Invalid value: "Web-": ${SUBDOMAIN_MSG}`] },
  { name: 'namespaced object without namespace', r: Pods, obj: pod({}, { namespace: undefined }), want: ['metadata.namespace: Required value'] },
  { name: 'bad label key and value', r: Pods, obj: pod({}, { labels: { 'a b': 'x', ok: 'v v' } }), want: [
    `metadata.labels: Invalid value: "a b": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
    `metadata.labels: Invalid value: "v v": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
  ] },
  { name: 'label value too long', r: Pods, obj: pod({}, { labels: { a: 'x'.repeat(64) } }), want: [`metadata.labels: Invalid value: "${'x'.repeat(64)}": must be no more than 63 characters`] },
  { name: 'annotations too large', r: Pods, obj: pod({}, { annotations: { a: 'x'.repeat(262144) } }), want: ['metadata.annotations: Too long: may not be more than 262144 bytes'] },
  { name: 'ownerReference without uid', r: Pods, obj: pod({}, { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs' }] }), want: ['metadata.ownerReferences.uid: Invalid value: "": must not be empty'] },
  { name: 'pod without containers', r: Pods, obj: pod({ containers: [] }), want: ['spec.containers: Required value'] },
  { name: 'container without name and image', r: Pods, obj: pod({ containers: [{}] }), want: ['spec.containers[0].name: Required value', 'spec.containers[0].image: Required value'] },
  { name: 'duplicate container names', r: Pods, obj: pod({ containers: [{ name: 'a', image: 'x:1' }, { name: 'a', image: 'y:1' }] }), want: ['spec.containers[1].name: Duplicate value: "a"'] },
  { name: 'container name not a label', r: Pods, obj: pod({ containers: [{ name: 'A.b', image: 'x:1' }] }), want: [`spec.containers[0].name: Invalid value: "A.b": ${LABEL_MSG}`] },
  { name: 'container name with dots', r: Pods, obj: pod({ containers: [{ name: 'a.b', image: 'x:1' }] }), want: ['spec.containers[0].name: Invalid value: "a.b": must not contain dots'] },
  { name: 'port out of range', r: Pods, obj: pod({ containers: [{ name: 'c', image: 'x:1', ports: [{ containerPort: 70000 }] }] }), want: ['spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive'] },
  { name: 'port protocol unsupported', r: Pods, obj: pod({ containers: [{ name: 'c', image: 'x:1', ports: [{ containerPort: 80, protocol: 'HTTP' }] }] }), want: ['spec.containers[0].ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"'] },
  { name: 'restartPolicy enum', r: Pods, obj: pod({ restartPolicy: 'Sometimes' }), want: ['spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"'] },
  { name: 'bad quantity', r: Pods, obj: pod({ containers: [{ name: 'c', image: 'x:1', resources: { limits: { cpu: 'lots' } } }] }), want: [
    "spec.containers[0].resources.limits[cpu]: Invalid value: \"lots\": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    "spec.containers[0].resources.requests[cpu]: Invalid value: \"lots\": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
  ] },
  { name: 'request above limit', r: Pods, obj: pod({ containers: [{ name: 'c', image: 'x:1', resources: { limits: { cpu: '500m' }, requests: { cpu: '1' } } }] }), want: ['spec.containers[0].resources.requests: Invalid value: "1": must be less than or equal to cpu limit of 500m'] },
  { name: 'extended resources may not overcommit', r: Pods, obj: pod({ containers: [{ name: 'c', image: 'x:1', resources: { limits: { 'example.com/gpu': '2' }, requests: { 'example.com/gpu': '1' } } }] }), want: ['spec.containers[0].resources.requests: Invalid value: "1": must be equal to example.com/gpu limit of 2'] },
  { name: 'unknown resource name', r: Pods, obj: pod({ containers: [{ name: 'c', image: 'x:1', resources: { limits: { gpu: '1' } } }] }), want: ['spec.containers[0].resources.limits[gpu]: Invalid value: "gpu": must be a standard resource for containers', 'spec.containers[0].resources.requests[gpu]: Invalid value: "gpu": must be a standard resource for containers'] },
  { name: 'negative quantity', r: Pods, obj: pod({ containers: [{ name: 'c', image: 'x:1', resources: { requests: { memory: '-1Mi' } } }] }), want: ['spec.containers[0].resources.requests[memory]: Invalid value: "-1Mi": must be greater than or equal to 0'] },
  { name: 'probe without handler', r: Pods, obj: pod({ containers: [{ name: 'c', image: 'x:1', livenessProbe: { periodSeconds: 5 } }] }), want: ['spec.containers[0].livenessProbe: Required value: must specify a handler type'] },
  { name: 'probe with two handlers', r: Pods, obj: pod({ containers: [{ name: 'c', image: 'x:1', readinessProbe: { exec: { command: ['true'] }, tcpSocket: { port: 80 } } }] }), want: ['spec.containers[0].readinessProbe.tcpSocket: Forbidden: may not specify more than 1 handler type'] },
  { name: 'liveness successThreshold must be 1', r: Pods, obj: pod({ containers: [{ name: 'c', image: 'x:1', livenessProbe: { exec: { command: ['true'] }, successThreshold: 2 } }] }), want: ['spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1'] },
  { name: 'preStop without handler', r: Pods, obj: pod({ containers: [{ name: 'c', image: 'x:1', lifecycle: { preStop: {} } }] }), want: ['spec.containers[0].lifecycle.preStop: Required value: must specify a handler type'] },
  { name: 'preStop sleep is a handler', r: Pods, obj: pod({ containers: [{ name: 'c', image: 'x:1', lifecycle: { preStop: { sleep: { seconds: 5 } } } }] }), want: [] },
  { name: 'volume mount without volume', r: Pods, obj: pod({ containers: [{ name: 'c', image: 'x:1', volumeMounts: [{ name: 'data', mountPath: '/d' }] }] }), want: ['spec.containers[0].volumeMounts[0].name: Not found: "data"'] },
  { name: 'toleration with seconds but not NoExecute', r: Pods, obj: pod({ tolerations: [{ key: 'k', operator: 'Exists', effect: 'NoSchedule', tolerationSeconds: 5 }] }), want: ["spec.tolerations[0].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when `tolerationSeconds` is set"] },

  { name: 'pod update: image may change', r: Pods, obj: pod({ containers: [{ name: 'c', image: 'nginx:1.27' }] }), old: pod(), want: [] },
  { name: 'pod update: labels may change', r: Pods, obj: pod({}, { labels: { a: 'b' } }), old: pod(), want: [] },
  { name: 'pod update: adding a toleration is fine', r: Pods, obj: pod({ tolerations: [{ key: 'x', operator: 'Exists' }] }), old: pod(), want: [] },
  { name: 'pod update: other spec fields are forbidden', r: Pods, obj: pod({ containers: [{ name: 'c', image: 'nginx:1.26', ports: [{ containerPort: 81 }] }] }), old: pod(), want: ['spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)\n  changed: spec.containers[0].ports'] },
  { name: 'pod update: namespace is immutable', r: Pods, obj: pod({}, { namespace: 'other' }), old: pod(), want: ['metadata.namespace: Invalid value: "other": field is immutable'] },
  { name: 'pod update: uid is immutable', r: Pods, obj: pod({}, { uid: 'b' }), old: pod({}, { uid: 'a' }), want: ['metadata.uid: Invalid value: "b": field is immutable'] },

  { name: 'valid deployment', r: Deployments, obj: deploy(), want: [] },
  { name: 'negative replicas', r: Deployments, obj: deploy({ replicas: -1 }), want: ['spec.replicas: Invalid value: -1: must be greater than or equal to 0'] },
  { name: 'selector does not match template', r: Deployments, obj: deploy({ selector: { matchLabels: { app: 'other' } } }), want: ['spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: `selector` does not match template `labels`'] },
  { name: 'missing selector', r: Deployments, obj: { ...deploy(), spec: { ...(deploy().spec as object), selector: undefined } }, want: ['spec.selector: Required value'] },
  { name: 'empty selector', r: Deployments, obj: deploy({ selector: {} }), want: ['spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment'] },
  { name: 'template restartPolicy must be Always', r: Deployments, obj: deploy({ template: { metadata: { labels: { app: 'web' } }, spec: { restartPolicy: 'Never', containers: [{ name: 'n', image: 'x:1' }] } } }), want: ['spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"'] },
  { name: 'template without containers', r: Deployments, obj: deploy({ template: { metadata: { labels: { app: 'web' } }, spec: {} } }), want: ['spec.template.spec.containers: Required value'] },
  { name: 'bad strategy type', r: Deployments, obj: deploy({ strategy: { type: 'Blue' } }), want: ['spec.strategy.type: Unsupported value: "Blue": supported values: "Recreate", "RollingUpdate"'] },
  { name: 'both maxSurge and maxUnavailable 0', r: Deployments, obj: deploy({ strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: 0 } } }), want: ['spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 when `maxSurge` is 0'] },
  { name: 'bad percent', r: Deployments, obj: deploy({ strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '10', maxUnavailable: 1 } } }), want: ["spec.strategy.rollingUpdate.maxSurge: Invalid value: \"10\": a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"] },
  { name: 'Recreate with rollingUpdate', r: Deployments, obj: deploy({ strategy: { type: 'Recreate', rollingUpdate: {} } }), want: ["spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'"] },
  { name: 'deployment selector is immutable', r: Deployments, obj: deploy({ selector: { matchLabels: { app: 'web', v: '2' } }, template: { metadata: { labels: { app: 'web', v: '2' } }, spec: { containers: [{ name: 'n', image: 'x:1' }] } } }), old: deploy(), want: ['spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"web", "v":"2"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable'] },
  { name: 'deployment replicas update is fine', r: Deployments, obj: deploy({ replicas: 5 }), old: deploy(), want: [] },
  { name: 'replicaset negative replicas', r: ReplicaSets, obj: applyDefaults(ReplicaSets, { metadata: { name: 'r', namespace: 'd' }, spec: { replicas: -2, selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'x:1' }] } } } }), want: ['spec.replicas: Invalid value: -2: must be greater than or equal to 0'] },

  { name: 'valid service', r: Services, obj: svc(), want: [] },
  { name: 'service name is a DNS-1035 label', r: Services, obj: svc({}, '1web'), want: [`metadata.name: Invalid value: "1web": ${DNS1035_MSG}`] },
  { name: 'service without ports', r: Services, obj: svc({ ports: [] }), want: ['spec.ports: Required value'] },
  { name: 'service type enum', r: Services, obj: svc({ type: 'Magic' }), want: ['spec.type: Unsupported value: "Magic": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"'] },
  { name: 'multiple ports need names', r: Services, obj: svc({ ports: [{ port: 80 }, { port: 443 }] }), want: ['spec.ports[0].name: Required value', 'spec.ports[1].name: Required value'] },
  { name: 'port range', r: Services, obj: svc({ ports: [{ port: 0 }] }), want: ['spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive', 'spec.ports[0].targetPort: Invalid value: 0: must be between 1 and 65535, inclusive'] },
  { name: 'nodePort outside range', r: Services, obj: svc({ type: 'NodePort', ports: [{ port: 80, nodePort: 80 }] }), want: ['spec.ports[0].nodePort: Invalid value: 80: provided port is not in the valid range. The range of valid ports is 30000-32767'] },
  { name: 'nodePort in range', r: Services, obj: svc({ type: 'NodePort', ports: [{ port: 80, nodePort: 30080 }] }), want: [] },
  { name: 'nodePort on ClusterIP', r: Services, obj: svc({ ports: [{ port: 80, nodePort: 30080 }] }), want: ["spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"] },
  { name: 'clusterIP may not change', r: Services, obj: svc({ clusterIP: '10.96.0.6', clusterIPs: ['10.96.0.6'] }), old: svc({ clusterIP: '10.96.0.5', clusterIPs: ['10.96.0.5'] }), want: ['spec.clusterIPs[0]: Invalid value: []string{"10.96.0.6"}: may not change once set'] },

  { name: 'clusterIP may not be unset', r: Services, obj: svc({}), old: svc({ clusterIP: '10.96.0.5', clusterIPs: ['10.96.0.5'] }), want: ['spec.clusterIPs[0]: Invalid value: []string{}: primary clusterIP can not be unset'] },
  { name: 'headless stays headless', r: Services, obj: svc({ clusterIP: 'None', clusterIPs: ['None'] }), old: svc({ clusterIP: 'None', clusterIPs: ['None'] }), want: [] },
  { name: 'externalTrafficPolicy on ClusterIP', r: Services, obj: svc({ externalTrafficPolicy: 'Local' }), want: ['spec.externalTrafficPolicy: Invalid value: "Local": may only be set for externally-accessible services'] },
  { name: 'namespace name is a label', r: Namespaces, obj: applyDefaults(Namespaces, { metadata: { name: 'a.b' } }), want: ['metadata.name: Invalid value: "a.b": must not contain dots'] },
  { name: 'valid namespace', r: Namespaces, obj: applyDefaults(Namespaces, { metadata: { name: 'team-a' } }), want: [] },
  { name: 'node podCIDR may not change', r: Nodes, obj: { metadata: { name: 'n' }, spec: { podCIDR: '10.244.2.0/24', podCIDRs: ['10.244.2.0/24'] } }, old: { metadata: { name: 'n' }, spec: { podCIDR: '10.244.1.0/24', podCIDRs: ['10.244.1.0/24'] } }, want: ['spec.podCIDRs: Forbidden: node updates may not change podCIDR except from "" to valid'] },
  { name: 'node podCIDR may be set', r: Nodes, obj: { metadata: { name: 'n' }, spec: { podCIDR: '10.244.2.0/24', podCIDRs: ['10.244.2.0/24'] } }, old: { metadata: { name: 'n' }, spec: {} }, want: [] },
  { name: 'secret key invalid', r: Secrets, obj: { metadata: { name: 's', namespace: 'd' }, type: 'Opaque', data: { 'a/b': 'eA==' } }, want: ["data: Invalid value: \"a/b\": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"] },
  { name: 'tls secret needs keys', r: Secrets, obj: { metadata: { name: 's', namespace: 'd' }, type: 'kubernetes.io/tls', data: { 'tls.crt': 'eA==' } }, want: ['data[tls.key]: Required value'] },
  { name: 'immutable secret data', r: Secrets, obj: { metadata: { name: 's', namespace: 'd' }, type: 'Opaque', immutable: true, data: { a: 'eQ==' } }, old: { metadata: { name: 's', namespace: 'd' }, type: 'Opaque', immutable: true, data: { a: 'eA==' } }, want: ['data: Forbidden: field is immutable when `immutable` is set'] },
  { name: 'secret type immutable', r: Secrets, obj: { metadata: { name: 's', namespace: 'd' }, type: 'x/y' }, old: { metadata: { name: 's', namespace: 'd' }, type: 'Opaque' }, want: ['type: Invalid value: "x/y": field is immutable'] },
  { name: 'immutable configmap', r: ConfigMaps, obj: { metadata: { name: 'c', namespace: 'd' }, immutable: false, data: { a: '1' } }, old: { metadata: { name: 'c', namespace: 'd' }, immutable: true, data: { a: '1' } }, want: ['immutable: Forbidden: field is immutable when `immutable` is set'] },
  { name: 'lease duration', r: Leases, obj: { metadata: { name: 'l', namespace: 'kube-node-lease' }, spec: { leaseDurationSeconds: 0 } }, want: ['spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0'] },
  { name: 'endpointslice address', r: EndpointSlices, obj: applyDefaults(EndpointSlices, { metadata: { name: 'e', namespace: 'd' }, addressType: 'IPv4', endpoints: [{ addresses: ['10.0.0.300'] }], ports: [{ port: 80 }] }), want: ['endpoints[0].addresses[0]: Invalid value: "10.0.0.300": must be a valid IPv4 address'] },
  { name: 'priority class too high', r: PriorityClasses, obj: { metadata: { name: 'p' }, value: 2000000000 }, want: ['value: Forbidden: maximum allowed value of a user defined priority is 1000000000'] },
  { name: 'cluster-scoped object with namespace', r: Nodes, obj: { metadata: { name: 'n', namespace: 'x' } }, want: ['metadata.namespace: Forbidden: not allowed on this type'] },
  { name: 'event namespace mismatch', r: Events, obj: { metadata: { name: 'e.1', namespace: 'a' }, involvedObject: { kind: 'Pod', namespace: 'b', name: 'p' } }, want: ['involvedObject.namespace: Invalid value: "b": does not match event.namespace'] },
];

describe('validateObject', () => {
  for (const tc of cases) {
    test(tc.name, () => assert.deepEqual(validateObject(tc.r, tc.obj, tc.old).map((e) => e.message), tc.want));
  }
});

describe('status', () => {
  test('toStatusCauses drops the field prefix, as upstream NewInvalid', () => {
    const errs = validateObject(Deployments, deploy({ replicas: -1 }));
    assert.deepEqual(toStatusCauses(errs), [{ reason: 'FieldValueInvalid', message: 'Invalid value: -1: must be greater than or equal to 0', field: 'spec.replicas' }]);
  });
  test('invalidError builds the 422 Status', () => {
    const one = invalidError(Deployments, 'web', validateObject(Deployments, deploy({ replicas: -1 })));
    assert.ok(isInvalid(one));
    assert.equal(one.code, 422);
    assert.equal(one.message, 'Deployment.apps "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0');
    assert.deepEqual(one.toStatus().details?.kind, 'Deployment');
    const two = invalidError(Pods, 'p', validateObject(Pods, pod({ containers: [{}] })));
    assert.equal(two.message, 'Pod "p" is invalid: [spec.containers[0].name: Required value, spec.containers[0].image: Required value]');
  });
  test('goValue renders like Go %#v / %q', () => {
    assert.equal(goValue({ b: '2', a: '1' }), 'map[string]string{"a":"1", "b":"2"}');
    assert.equal(goValue(['x']), '[]string{"x"}');
    assert.equal(goValue(null), 'null');
    assert.equal(goValue(-1), '-1');
  });
});
