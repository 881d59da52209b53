import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@mk8s/component-base/testing';
import { ControllerExpectations, EXPECTATIONS_TIMEOUT_MS } from './expectations.js';

test('expectations hold a key until every create and delete is observed', () => {
  const e = new ControllerExpectations(new FakeClock());
  assert.equal(e.satisfied('ns/rs'), true);
  e.expectCreations('ns/rs', 2);
  assert.equal(e.satisfied('ns/rs'), false);
  e.creationObserved('ns/rs');
  assert.equal(e.satisfied('ns/rs'), false);
  e.creationObserved('ns/rs');
  assert.equal(e.satisfied('ns/rs'), true);

  e.expectDeletions('ns/rs', ['ns/a', 'ns/b']);
  e.deletionObserved('ns/rs', 'ns/a');
  e.deletionObserved('ns/rs', 'ns/a'); // a second delete event for the same pod counts once
  assert.equal(e.satisfied('ns/rs'), false);
  e.deletionObserved('ns/rs', 'ns/b');
  assert.equal(e.satisfied('ns/rs'), true);
});

test('expectations expire after the timeout', () => {
  const clock = new FakeClock();
  const e = new ControllerExpectations(clock);
  e.expectCreations('k', 1);
  clock.step(EXPECTATIONS_TIMEOUT_MS);
  assert.equal(e.satisfied('k'), false);
  clock.step(1);
  assert.equal(e.satisfied('k'), true);
});
