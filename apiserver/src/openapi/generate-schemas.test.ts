import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { GENERATED_PATH, renderSchemasModule } from './generate-schemas.js';

test('schemas.generated.ts is up to date with the generator (rerun generate-schemas.ts)', () => {
  assert.ok(readFileSync(GENERATED_PATH, 'utf8') === renderSchemasModule(), 'stale schemas.generated.ts');
});
