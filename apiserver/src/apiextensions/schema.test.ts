import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { applySchemaDefaults, cachedSchemaCount, compileSchema, prune, structuralErrors, type JSONSchemaProps } from './schema.js';
import { evalJsonPath, parseJsonPath } from './jsonpath.js';
import { sortVersions } from './custom-resource.js';
import { crdStatusFor, nameConflicts } from './controller.js';
import { celErrors, ruleCompileErrors } from './cel.js';
import type { Crd } from './types.js';

const spec = (properties: Record<string, JSONSchemaProps>, required?: string[]): JSONSchemaProps =>
  ({ type: 'object', properties: { spec: { type: 'object', properties, ...(required ? { required } : {}) } } });

describe('compileSchema: upstream messages', () => {
  for (const tc of [
    { s: { n: { type: 'integer' } }, v: { n: 'x' }, want: 'spec.n: Invalid value: "string": spec.n in body must be of type integer: "string"' },
    { s: { n: { type: 'integer', minimum: 2 } }, v: { n: 1 }, want: 'spec.n: Invalid value: 1: spec.n in body should be greater than or equal to 2' },
    { s: { n: { type: 'integer', maximum: 2, exclusiveMaximum: true } }, v: { n: 2 }, want: 'spec.n: Invalid value: 2: spec.n in body should be less than 2' },
    { s: { e: { type: 'string', enum: ['a', 'b'] } }, v: { e: 'c' }, want: 'spec.e: Unsupported value: "c": supported values: "a", "b"' },
    { s: { p: { type: 'string', pattern: '^a+$' } }, v: { p: 'b' }, want: "spec.p: Invalid value: \"b\": spec.p in body should match '^a+$'" },
    { s: { l: { type: 'string', maxLength: 2 } }, v: { l: 'abc' }, want: 'spec.l: Too long: may not be more than 2 bytes' },
    { s: { i: { type: 'array', items: { type: 'string' }, maxItems: 1 } }, v: { i: ['a', 'b'] }, want: 'spec.i: Too many: 2: must have at most 1 items' },
    { s: { i: { type: 'array', items: { type: 'integer' } } }, v: { i: [1, 'x'] }, want: 'spec.i[1]: Invalid value: "string": spec.i[1] in body must be of type integer: "string"' },
    { s: { ip: { type: 'string', format: 'ipv4' } }, v: { ip: 'x' }, want: 'spec.ip: Invalid value: "x": spec.ip in body must be of type ipv4: "x"' },
    { s: { q: { type: 'string' } }, v: {}, req: ['q'], want: 'spec.q: Required value' },
    { s: { x: { 'x-kubernetes-int-or-string': true } }, v: { x: true }, want: 'spec.x: Invalid value: "boolean": spec.x in body must be of type integer,string: "boolean"' },
  ] as { s: Record<string, JSONSchemaProps>; v: unknown; req?: string[]; want: string }[]) {
    test(tc.want, () => assert.deepEqual(compileSchema(spec(tc.s, tc.req))({ spec: tc.v }).map((e) => e.message), [tc.want]));
  }
  test('valid objects, int-or-string, nullable and unknown formats pass', () => {
    const v = compileSchema(spec({ x: { 'x-kubernetes-int-or-string': true }, n: { type: 'string', nullable: true }, f: { type: 'string', format: 'isbn' } }));
    assert.deepEqual(v({ spec: { x: 1, n: null, f: 'anything' } }), []);
    assert.deepEqual(v({ spec: { x: 'http' } }), []);
  });
});

test('prune drops unknown fields but keeps root metadata, preserved and additionalProperties subtrees', () => {
  const s: JSONSchemaProps = { type: 'object', properties: {
    spec: { type: 'object', properties: { a: { type: 'string' }, keep: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }, m: { type: 'object', additionalProperties: { type: 'object', properties: { v: { type: 'string' } } } } } },
  } };
  const obj = { apiVersion: 'x/v1', kind: 'K', metadata: { name: 'n' }, top: 1, spec: { a: 'x', b: 2, keep: { any: 1 }, m: { k: { v: 'a', w: 'b' } } } };
  assert.deepEqual(prune(obj, s), ['top', 'spec.b', 'spec.m.k.w']);
  assert.deepEqual(obj, { apiVersion: 'x/v1', kind: 'K', metadata: { name: 'n' }, spec: { a: 'x', keep: { any: 1 }, m: { k: { v: 'a' } } } });
});

test('defaults fill absent fields top-down', () => {
  const s: JSONSchemaProps = { type: 'object', properties: { spec: { type: 'object', default: {}, properties: { r: { type: 'integer', default: 1 }, l: { type: 'array', items: { type: 'object', properties: { p: { type: 'string', default: 'TCP' } } } } } } } };
  const obj: Record<string, unknown> = { l: undefined };
  delete obj['l'];
  applySchemaDefaults(obj, s);
  assert.deepEqual(obj, { spec: { r: 1 } });
  const withList = { spec: { r: 3, l: [{}, { p: 'UDP' }] } };
  applySchemaDefaults(withList, s);
  assert.deepEqual(withList, { spec: { r: 3, l: [{ p: 'TCP' }, { p: 'UDP' }] } });
});

test('structuralErrors: types required, object root, metadata limited to name/generateName', () => {
  const errs = structuralErrors({ type: 'object', properties: { spec: { properties: { a: { type: 'string' } } }, metadata: { type: 'object', properties: { labels: { type: 'object' } } } } }, 'r');
  assert.deepEqual(errs.map((e) => e.field), ['r.properties[spec].type', 'r.properties[metadata].properties[labels]']);
});

describe('jsonpath', () => {
  const obj = { status: { conditions: [{ type: 'A', status: 'False' }, { type: 'Ready', status: 'True' }] }, spec: { l: [{ n: 1 }, { n: 2 }], 'a.b': 'dot' } };
  for (const [path, want] of [
    ['.status.conditions[?(@.type=="Ready")].status', ['True']],
    ['.spec.l[1].n', [2]],
    ['.spec.l[*].n', [1, 2]],
    [".spec['a.b']", ['dot']],
    ['.spec.missing', []],
  ] as const) test(path, () => assert.deepEqual(evalJsonPath(parseJsonPath(path), obj), want));
});

test('versions sort as upstream: GA, beta, alpha, then others', () => {
  assert.deepEqual(sortVersions(['v1alpha1', 'foo', 'v2beta1', 'v1', 'v2', 'v1beta2', 'v1beta1', 'bar'].map((name) => ({ name }))).map((v) => v.name),
    ['v2', 'v1', 'v2beta1', 'v1beta2', 'v1beta1', 'v1alpha1', 'bar', 'foo']);
});

describe('names', () => {
  const crd = (name: string, plural: string, kind: string, accepted = true): Crd => ({
    apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: `${plural}.g.io` },
    spec: { group: 'g.io', scope: 'Namespaced', names: { plural, kind, singular: name }, versions: [] },
    ...(accepted ? { status: { acceptedNames: { plural, kind, singular: name } } } : {}),
  }) as Crd;
  test('conflicts', () => {
    assert.equal(nameConflicts({ plural: 'as', kind: 'A' }, [{ plural: 'as', kind: 'B' }]), '"as" is already in use');
    assert.equal(nameConflicts({ plural: 'as', kind: 'A', shortNames: ['x'] }, [{ plural: 'bs', kind: 'B', shortNames: ['x'] }]), '"x" is already in use');
    assert.equal(nameConflicts({ plural: 'as', kind: 'A' }, [{ plural: 'bs', kind: 'B' }]), undefined);
  });
  test('crdStatusFor accepts, establishes, and keeps established on a later conflict', () => {
    const now = new Date('2026-01-01T00:00:00Z');
    const fresh = crd('a', 'as', 'A', false);
    const s = crdStatusFor(fresh, [fresh], now);
    assert.equal(s.acceptedNames?.plural, 'as');
    assert.deepEqual(s.conditions?.map((c) => [c.type, c.status, c.reason]), [['NamesAccepted', 'True', 'NoConflicts'], ['Established', 'True', 'InitialNamesAccepted']]);
    const clash = crd('b', 'bs', 'A', false);
    const c = crdStatusFor(clash, [crd('a', 'as', 'A'), clash], now);
    assert.equal(c.acceptedNames, undefined);
    assert.deepEqual(c.conditions?.map((x) => [x.type, x.status, x.reason]), [['NamesAccepted', 'False', 'NameConflict'], ['Established', 'False', 'NotAccepted']]);
  });
});

describe('x-kubernetes-validations (CEL)', () => {
  const s: JSONSchemaProps = { type: 'object', properties: { spec: {
    type: 'object',
    'x-kubernetes-validations': [
      { rule: 'self.replicas <= self.maxReplicas', message: 'replicas must not exceed maxReplicas' },
      { rule: 'self.name.startsWith("w")', messageExpression: '"name " + self.name + " must start with w"', fieldPath: '.name' },
    ],
    properties: {
      replicas: { type: 'integer' }, maxReplicas: { type: 'integer' }, name: { type: 'string' },
      immutable: { type: 'string', 'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'Value is immutable' }] },
      ratio: { type: 'number', 'x-kubernetes-validations': [{ rule: 'self < 1.0' }] },
    },
  } } };
  const errs = (obj: unknown, old?: unknown) => celErrors(obj, old, s).map((e) => e.message);
  test('passing rules give nothing', () => assert.deepEqual(errs({ spec: { replicas: 1, maxReplicas: 2, name: 'web', ratio: 0.5 } }), []));
  test('message, messageExpression with fieldPath, default message', () => {
    assert.deepEqual(errs({ spec: { replicas: 3, maxReplicas: 2, name: 'api', ratio: 2 } }), [
      'spec: Invalid value: "object": replicas must not exceed maxReplicas',
      'spec.name: Invalid value: "object": name api must start with w',
      'spec.ratio: Invalid value: "number": failed rule: self < 1.0',
    ]);
  });
  test('transition rules need the old object', () => {
    assert.deepEqual(errs({ spec: { replicas: 1, maxReplicas: 1, name: 'w', immutable: 'b' } }), []);
    assert.deepEqual(errs({ spec: { replicas: 1, maxReplicas: 1, name: 'w', immutable: 'b' } }, { spec: { immutable: 'a' } }), ['spec.immutable: Invalid value: "string": Value is immutable']);
  });
  test('rules that do not compile are CRD validation errors', () => {
    assert.deepEqual(ruleCompileErrors({ type: 'object', 'x-kubernetes-validations': [{ rule: 'self.(' }] }, 'r').map((e) => e.field), ['r.x-kubernetes-validations[0].rule']);
  });
});

describe('compileSchema: memory', () => {
  test('rebuilding a CRD version does not leave its schema in the shared ajv, and the validator still works', () => {
    const s = (): JSONSchemaProps => spec({ n: { type: 'integer', minimum: 2 } });
    compileSchema(s());
    const before = cachedSchemaCount();
    let v = compileSchema(s());
    for (let i = 0; i < 20; i++) v = compileSchema(s());
    assert.equal(cachedSchemaCount(), before);
    assert.equal(v({ spec: { n: 3 } }).length, 0);
    assert.equal(v({ spec: { n: 1 } }).length, 1);
  });
});
