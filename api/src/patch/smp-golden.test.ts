// Differential test: every case in testdata/smp-cases.json must give what the real kubectl 1.32
// (apimachinery strategicpatch with the compiled-in Go types) gave, recorded in smp-golden.json
// by testdata/generate-golden.mjs.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { lookupKind } from '../scheme.js';
import { isBadRequest } from '../errors.js';
import { applyStrategicMergePatch } from './strategic-merge-patch.js';

interface Case { name: string; original: { apiVersion: string; kind: string }; patch: unknown }
const dir = new URL('./testdata/', import.meta.url);
const cases = JSON.parse(readFileSync(new URL('smp-cases.json', dir), 'utf8')) as Case[];
const golden = JSON.parse(readFileSync(new URL('smp-golden.json', dir), 'utf8')) as Record<string, { result?: unknown; error?: string }>;

describe('strategic merge patch matches kubectl 1.32', () => {
  for (const c of cases) {
    test(c.name, () => {
      const want = golden[c.name];
      assert.ok(want, 'golden missing: rerun testdata/generate-golden.mjs');
      const resource = lookupKind(c.original.apiVersion, c.original.kind);
      assert.ok(resource);
      if (want.error !== undefined) {
        assert.throws(() => applyStrategicMergePatch(c.original, c.patch, resource),
          (e: unknown) => isBadRequest(e) && want.error === `error: ${(e as Error).message}`);
        return;
      }
      assert.deepEqual(applyStrategicMergePatch(c.original, c.patch, resource), want.result);
    });
  }
});
