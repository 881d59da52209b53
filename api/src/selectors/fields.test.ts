import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { isBadRequest } from '../errors.js';
import { Pods, Events, Nodes, Secrets, Namespaces, ReplicaSets, Deployments, Services } from '../scheme.js';
import { parseFieldSelector, fieldsOf, parseFieldSelectorFor, selectionPredicate } from './fields.js';

describe('parseFieldSelector', () => {
  const cases = [
    { sel: '', fields: { a: 'b' }, want: true, str: '' },
    { sel: 'a=b', fields: { a: 'b' }, want: true, str: 'a=b' },
    { sel: 'a==b', fields: { a: 'b' }, want: true, str: 'a=b' },
    { sel: 'a!=b', fields: { a: 'b' }, want: false, str: 'a!=b' },
    { sel: 'a!=b', fields: {}, want: true, str: 'a!=b' },
    { sel: 'a=', fields: {}, want: true, str: 'a=' },
    { sel: 'b=2,a=1', fields: { a: '1', b: '2' }, want: true, str: 'a=1,b=2' },
    { sel: 'status.phase!=Succeeded,status.phase!=Failed', fields: { 'status.phase': 'Running' }, want: true, str: 'status.phase!=Failed,status.phase!=Succeeded' },
    { sel: 'status.phase!=Succeeded,status.phase!=Failed', fields: { 'status.phase': 'Failed' }, want: false, str: 'status.phase!=Failed,status.phase!=Succeeded' },
    { sel: 'a=x\\,y', fields: { a: 'x,y' }, want: true, str: 'a=x\\,y' },
  ];
  for (const tc of cases) {
    test(`${tc.sel} → ${tc.want}`, () => {
      const s = parseFieldSelector(tc.sel);
      assert.equal(s.matches(tc.fields), tc.want);
      assert.equal(s.toString(), tc.str);
    });
  }
  test('a term without operator is rejected', () => {
    assert.throws(() => parseFieldSelector('a=b,c'), (e: unknown) => isBadRequest(e) && (e as Error).message === "invalid selector: 'a=b,c'; can't understand 'c'");
  });
  test('requiresExactMatch', () => {
    assert.equal(parseFieldSelector('spec.nodeName=n1').requiresExactMatch('spec.nodeName'), 'n1');
    assert.equal(parseFieldSelector('spec.nodeName!=n1').requiresExactMatch('spec.nodeName'), undefined);
  });
});

describe('fieldsOf', () => {
  test('pod fields', () => {
    const pod = { metadata: { name: 'p', namespace: 'ns' }, spec: { nodeName: 'n1', restartPolicy: 'Always', schedulerName: 'default-scheduler', serviceAccountName: 'default' }, status: { phase: 'Running', podIPs: [{ ip: '10.244.0.5' }], podIP: '10.244.0.5' } };
    assert.deepEqual(fieldsOf(Pods, pod), {
      'metadata.name': 'p', 'metadata.namespace': 'ns', 'spec.nodeName': 'n1', 'spec.restartPolicy': 'Always',
      'spec.schedulerName': 'default-scheduler', 'spec.serviceAccountName': 'default', 'spec.hostNetwork': 'false',
      'status.phase': 'Running', 'status.podIP': '10.244.0.5', 'status.nominatedNodeName': '',
    });
  });
  const cases = [
    { r: Events, obj: { metadata: { name: 'e' }, involvedObject: { kind: 'Pod', name: 'p', namespace: 'default', uid: 'u1' }, reason: 'Scheduled', type: 'Normal', source: { component: 'kubelet' }, reportingComponent: 'kubelet' },
      want: { 'involvedObject.kind': 'Pod', 'involvedObject.name': 'p', 'involvedObject.uid': 'u1', reason: 'Scheduled', type: 'Normal', source: 'kubelet', reportingComponent: 'kubelet', 'involvedObject.fieldPath': '' } },
    { r: Nodes, obj: { metadata: { name: 'n1' }, spec: { unschedulable: true } }, want: { 'metadata.name': 'n1', 'metadata.namespace': '', 'spec.unschedulable': 'true' } },
    { r: Nodes, obj: { metadata: { name: 'n1' } }, want: { 'spec.unschedulable': 'false' } },
    { r: Secrets, obj: { metadata: { name: 's' }, type: 'Opaque' }, want: { type: 'Opaque' } },
    { r: Namespaces, obj: { metadata: { name: 'x' }, status: { phase: 'Active' } }, want: { 'status.phase': 'Active', 'metadata.namespace': '' } },
    { r: ReplicaSets, obj: { metadata: { name: 'x' }, status: { replicas: 3 } }, want: { 'status.replicas': '3' } },
  ];
  for (const tc of cases) {
    test(`${tc.r.resource} fields`, () => {
      const got = fieldsOf(tc.r, tc.obj);
      for (const [k, v] of Object.entries(tc.want)) assert.equal(got[k], v, k);
    });
  }
});

describe('parseFieldSelectorFor', () => {
  const cases = [
    { r: Pods, sel: 'spec.nodeName=n1,status.phase!=Failed', err: undefined },
    { r: Pods, sel: 'spec.foo=x', err: 'field label not supported: spec.foo' },
    { r: Events, sel: 'involvedObject.name=x,involvedObject.namespace=,involvedObject.kind=Node,involvedObject.uid=u', err: undefined },
    { r: Nodes, sel: 'spec.unschedulable=false', err: undefined },
    { r: Deployments, sel: 'metadata.name=x', err: undefined },
    { r: Deployments, sel: 'spec.replicas=1', err: '"spec.replicas" is not a known field selector: only "metadata.name", "metadata.namespace"' },
    { r: Services, sel: 'metadata.namespace=default', err: undefined },
  ];
  for (const tc of cases) {
    test(`${tc.r.resource}: ${tc.sel}`, () => {
      if (tc.err === undefined) assert.doesNotThrow(() => parseFieldSelectorFor(tc.r, tc.sel));
      else assert.throws(() => parseFieldSelectorFor(tc.r, tc.sel), (e: unknown) => isBadRequest(e) && (e as Error).message === tc.err);
    });
  }
});

test('selectionPredicate combines label and field selectors', () => {
  const p = selectionPredicate(Pods, { labelSelector: 'app=web', fieldSelector: 'spec.nodeName=n1' });
  assert.equal(p.empty, false);
  assert.equal(p.matches({ metadata: { name: 'a', labels: { app: 'web' } }, spec: { nodeName: 'n1' } }), true);
  assert.equal(p.matches({ metadata: { name: 'a', labels: { app: 'web' } }, spec: { nodeName: 'n2' } }), false);
  assert.equal(p.matches({ metadata: { name: 'a' }, spec: { nodeName: 'n1' } }), false);
  assert.equal(selectionPredicate(Pods, {}).empty, true);
});
