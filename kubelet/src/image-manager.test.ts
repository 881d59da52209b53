import { test } from 'node:test';
import assert from 'node:assert/strict';
import { invalidImageReason } from './image-manager.js';

for (const [image, want] of [
  ['busybox', undefined], ['busybox:1.36', undefined], ['mk8s/testserver:1.0', undefined], ['registry.local:5000/a/b-c_d:v1.2', undefined],
  ['busybox@sha256:' + 'a'.repeat(64), undefined],
  ['Busybox:1.36', 'invalid reference format: repository name (Busybox) must be lowercase'],
  ['busy box', 'invalid reference format'], ['busybox:', 'invalid reference format'], ['', 'invalid reference format: empty image name'],
] as const) {
  test(`image reference ${JSON.stringify(image)} → ${want ?? 'valid'}`, () => assert.equal(invalidImageReason(image), want));
}
