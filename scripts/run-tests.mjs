#!/usr/bin/env node
// Lists test files by kind and runs them with node's test runner from TypeScript sources.
// Node 20's --test does not expand globs, hence this script.
//   unit: */src/**/*.test.ts (not .int.)   int: **/*.int.test.ts   e2e: test/e2e/**/*.e2e.test.ts
//   chaos: test/chaos/**/*.chaos.test.ts (long fault-injection runs; only `make chaos` runs them)
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { spawnSync } from 'node:child_process';

const root = new URL('..', import.meta.url).pathname;
const kind = process.argv[2] ?? 'unit';
const filter = process.argv.slice(3);
const skip = new Set(['node_modules', 'dist', '.git', '.mk8s']);

function walk(dir, out = []) {
  for (const name of readdirSync(dir)) {
    if (skip.has(name)) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out); else out.push(relative(root, p));
  }
  return out;
}
const all = walk(root);
const pick = {
  unit: (f) => /\/src\/.*\.test\.ts$/.test(f) && !f.endsWith('.int.test.ts') && !f.startsWith('test/'),
  int: (f) => f.endsWith('.int.test.ts'),
  e2e: (f) => f.startsWith('test/e2e/') && f.endsWith('.e2e.test.ts'),
  chaos: (f) => f.startsWith('test/chaos/') && f.endsWith('.chaos.test.ts'),
}[kind];
if (!pick) { console.error(`unknown kind ${kind}`); process.exit(2); }
let files = all.filter(pick).sort();
if (filter.length) files = files.filter((f) => filter.some((x) => f.includes(x)));
if (files.length === 0) { console.log(`no ${kind} tests`); process.exit(0); }
const concurrency = kind === 'unit' ? '2' : '1';
const args = ['--conditions=@mk8s/source', '--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, '--test-reporter=spec', ...files];
const r = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit', env: { ...process.env, MK8S_ROOT: root } });
process.exit(r.status ?? 1);
