import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { isBadRequest, ApiError } from '../errors.js';
import { parseLabelSelector, labelSelectorFromObject, labelSelectorFromSet, selectorToString, formatLabelSelector } from './labels.js';

describe('parseLabelSelector matching', () => {
  const cases: { sel: string; labels?: Record<string, string>; want: boolean }[] = [
    { sel: '', labels: { a: 'b' }, want: true },
    { sel: '', want: true },
    { sel: 'a=b', labels: { a: 'b' }, want: true },
    { sel: 'a==b', labels: { a: 'b' }, want: true },
    { sel: 'a=b', labels: { a: 'c' }, want: false },
    { sel: 'a=b', labels: {}, want: false },
    { sel: 'a!=b', labels: { a: 'c' }, want: true },
    { sel: 'a!=b', labels: {}, want: true },
    { sel: 'a!=b', labels: { a: 'b' }, want: false },
    { sel: 'a in (x,y)', labels: { a: 'y' }, want: true },
    { sel: 'a in (x,y)', labels: { a: 'z' }, want: false },
    { sel: 'a in (x,y)', labels: {}, want: false },
    { sel: 'a notin (x)', labels: { a: 'y' }, want: true },
    { sel: 'a notin (x)', labels: {}, want: true },
    { sel: 'a notin (x)', labels: { a: 'x' }, want: false },
    { sel: 'a', labels: { a: '' }, want: true },
    { sel: 'a', labels: { b: '' }, want: false },
    { sel: '!a', labels: { b: '' }, want: true },
    { sel: '!a', labels: { a: 'x' }, want: false },
    { sel: 'a=b,c=d', labels: { a: 'b', c: 'd' }, want: true },
    { sel: 'a=b,c=d', labels: { a: 'b', c: 'e' }, want: false },
    { sel: 'a=', labels: { a: '' }, want: true },
    { sel: 'a=,b', labels: { a: '', b: 'x' }, want: true },
    { sel: 'a in (),b', labels: { a: '', b: 'x' }, want: true },
    { sel: 'x in (foo,,baz),y,z notin ()', labels: { x: '', y: '1', z: 'a' }, want: true },
    { sel: '  app = web , tier in (fe, be) ', labels: { app: 'web', tier: 'be' }, want: true },
    { sel: 'example.com/app=web', labels: { 'example.com/app': 'web' }, want: true },
    { sel: 'in in (in)', labels: { in: 'in' }, want: true },
    { sel: 'n>5', labels: { n: '6' }, want: true },
    { sel: 'n>5', labels: { n: '5' }, want: false },
    { sel: 'n<5', labels: { n: '-1' }, want: true },
    { sel: 'n<5', labels: { n: 'x' }, want: false },
  ];
  for (const tc of cases) {
    test(`${JSON.stringify(tc.sel)} vs ${JSON.stringify(tc.labels)} → ${tc.want}`, () => {
      assert.equal(parseLabelSelector(tc.sel).matches(tc.labels), tc.want);
    });
  }
});

describe('parseLabelSelector string form', () => {
  const cases = [
    { in: '', out: '' },
    { in: 'b=2,a=1', out: 'a=1,b=2' },
    { in: 'a==b', out: 'a==b' },
    { in: 'a in (y,x,x)', out: 'a in (x,y)' },
    { in: 'a notin (x)', out: 'a notin (x)' },
    { in: '!a,b', out: '!a,b' },
    { in: 'a!=b', out: 'a!=b' },
    { in: 'n>5', out: 'n>5' },
  ];
  for (const tc of cases) test(`${tc.in} → ${tc.out}`, () => assert.equal(parseLabelSelector(tc.in).toString(), tc.out));
  test('empty selector reports empty', () => {
    assert.equal(parseLabelSelector('').empty, true);
    assert.equal(parseLabelSelector('a').empty, false);
  });
});

describe('parseLabelSelector errors', () => {
  const nameMsg = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
  const cases = [
    { in: 'a b', msg: "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt" },
    { in: 'a in b', msg: "unable to parse requirement: found 'b' expected: '('" },
    { in: 'a=b,', msg: "found '', expected: identifier after ','" },
    { in: ',a', msg: "found ',', expected: !, identifier, or 'end of string'" },
    { in: 'a=b=c', msg: "found '=', expected: ',' or 'end of string'" },
    { in: 'a in (x', msg: "unable to parse requirement: found '', expected: ',' or ')'" },
    { in: '!', msg: "unable to parse requirement: found '', expected: identifier" },
    { in: 'a@b=c', msg: `unable to parse requirement: <nil>: Invalid value: "a@b": ${nameMsg}` },
    { in: 'a=b@d', msg: `unable to parse requirement: values[0][a]: Invalid value: "b@d": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')` },
    { in: 'a>x', msg: `unable to parse requirement: values[0]: Invalid value: "x": for 'Gt', 'Lt' operators, the value must be an integer` },
    { in: 'a =! b', msg: "unable to parse requirement: found '!', expected: identifier" },
    { in: 'a (b)', msg: "unable to parse requirement: found '(', expected: in, notin, =, ==, !=, gt, lt" },
  ];
  for (const tc of cases) {
    test(`${JSON.stringify(tc.in)} is rejected`, () => {
      assert.throws(() => parseLabelSelector(tc.in), (e: unknown) => {
        assert.ok(isBadRequest(e));
        assert.equal((e as ApiError).code, 400);
        assert.equal((e as Error).message, tc.msg);
        return true;
      });
    });
  }
});

describe('labelSelectorFromObject', () => {
  const cases = [
    { name: 'undefined matches nothing', sel: undefined, labels: { a: 'b' }, want: false, str: '' },
    { name: 'empty object matches everything', sel: {}, labels: {}, want: true, str: '' },
    { name: 'matchLabels', sel: { matchLabels: { app: 'web', tier: 'fe' } }, labels: { app: 'web', tier: 'fe', x: 'y' }, want: true, str: 'app=web,tier=fe' },
    { name: 'matchLabels mismatch', sel: { matchLabels: { app: 'web' } }, labels: { app: 'db' }, want: false, str: 'app=web' },
    { name: 'In', sel: { matchExpressions: [{ key: 'a', operator: 'In', values: ['y', 'x'] }] }, labels: { a: 'x' }, want: true, str: 'a in (x,y)' },
    { name: 'NotIn', sel: { matchExpressions: [{ key: 'a', operator: 'NotIn', values: ['x'] }] }, labels: { a: 'x' }, want: false, str: 'a notin (x)' },
    { name: 'Exists', sel: { matchExpressions: [{ key: 'a', operator: 'Exists' }] }, labels: { a: '' }, want: true, str: 'a' },
    { name: 'DoesNotExist', sel: { matchExpressions: [{ key: 'a', operator: 'DoesNotExist' }] }, labels: { a: '' }, want: false, str: '!a' },
    { name: 'labels and expressions sorted by key', sel: { matchLabels: { z: '1' }, matchExpressions: [{ key: 'a', operator: 'Exists' }] }, labels: { z: '1', a: '' }, want: true, str: 'a,z=1' },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      const s = labelSelectorFromObject(tc.sel);
      assert.equal(s.matches(tc.labels), tc.want);
      assert.equal(s.toString(), tc.str);
      assert.equal(selectorToString(tc.sel), tc.str);
    });
  }
  test('bad operator is rejected', () => {
    assert.throws(() => labelSelectorFromObject({ matchExpressions: [{ key: 'a', operator: 'Gt', values: ['1'] }] }),
      (e: unknown) => isBadRequest(e) && (e as Error).message === '"Gt" is not a valid label selector operator');
  });
  test('In without values is rejected', () => {
    assert.throws(() => labelSelectorFromObject({ matchExpressions: [{ key: 'a', operator: 'In', values: [] }] }),
      (e: unknown) => isBadRequest(e) && (e as Error).message === "values: Invalid value: []string{}: for 'in', 'notin' operators, values set can't be empty");
  });
  test('formatLabelSelector', () => {
    assert.equal(formatLabelSelector({}), '<none>');
    assert.equal(formatLabelSelector({ matchLabels: { a: 'b' } }), 'a=b');
    assert.equal(formatLabelSelector({ matchLabels: { 'a@': 'b' } }), '<error>');
  });
  test('labelSelectorFromSet', () => {
    assert.equal(labelSelectorFromSet({ b: '2', a: '1' }).toString(), 'a=1,b=2');
    assert.equal(labelSelectorFromSet(undefined).empty, true);
    assert.equal(parseLabelSelector('a=1').requiresExactMatch('a'), '1');
    assert.equal(parseLabelSelector('a!=1').requiresExactMatch('a'), undefined);
  });
});
