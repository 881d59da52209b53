import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FeatureGate, parseFeatureGates, setFeatureGatesFlag } from './featuregate.js';

for (const tc of [
  { name: 'empty: the defaults', value: '', want: false },
  { name: 'on', value: 'MaxUnavailableStatefulSet=true', want: true },
  { name: 'off, spaces and empty pairs tolerated', value: ' MaxUnavailableStatefulSet = false ,', want: false },
  { name: 'last one wins', value: 'MaxUnavailableStatefulSet=false,MaxUnavailableStatefulSet=1', want: true },
]) {
  test(`FeatureGate.set: ${tc.name}`, () => {
    assert.equal(FeatureGate.with(tc.value).enabled('MaxUnavailableStatefulSet'), tc.want);
  });
}

for (const tc of [
  { value: 'Nope=true', err: /unrecognized feature gate: Nope/ },
  { value: 'MaxUnavailableStatefulSet', err: /missing bool value for MaxUnavailableStatefulSet/ },
  { value: 'MaxUnavailableStatefulSet=yes', err: /invalid value of MaxUnavailableStatefulSet=yes/ },
]) {
  test(`FeatureGate.set refuses ${tc.value}`, () => {
    const g = new FeatureGate();
    assert.throws(() => g.set(tc.value), tc.err);
    assert.equal(g.enabled('MaxUnavailableStatefulSet'), false, 'nothing applied');
  });
}

test('a locked feature cannot move off its default; an unknown name read is a programming error', () => {
  const g = new FeatureGate({ Locked: { default: true, preRelease: 'GA', lockToDefault: true } });
  assert.throws(() => g.set('Locked=false'), /locked to true/);
  g.set('Locked=true');
  assert.throws(() => new FeatureGate({}).enabled('MaxUnavailableStatefulSet'), /not registered/);
  assert.deepEqual([...parseFeatureGates('A=true,B=f')], [['A', true], ['B', false]]);
});

test('setFeatureGatesFlag: one line naming the flag on a bad value, nothing applied; undefined when it took', () => {
  const g = new FeatureGate();
  const msg = setFeatureGatesFlag(g, 'MaxUnavailableStatefulSet=maybe');
  assert.match(msg ?? '', /^invalid argument "MaxUnavailableStatefulSet=maybe" for "--feature-gates" flag: invalid value of MaxUnavailableStatefulSet=maybe/);
  assert.doesNotMatch(msg ?? '', /\n/);
  assert.equal(g.enabled('MaxUnavailableStatefulSet'), false);
  assert.equal(setFeatureGatesFlag(g, 'Nope=true'), 'invalid argument "Nope=true" for "--feature-gates" flag: unrecognized feature gate: Nope');
  assert.equal(setFeatureGatesFlag(g, 'MaxUnavailableStatefulSet=true'), undefined);
  assert.equal(g.enabled('MaxUnavailableStatefulSet'), true);
});
