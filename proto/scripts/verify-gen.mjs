#!/usr/bin/env node
// Regenerates the TypeScript for cri.proto into a temp dir and fails when it differs from the
// committed src/generated (the "regenerate + git diff --exit-code" check, without touching the tree).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

const here = new URL('..', import.meta.url).pathname;
const pkg = JSON.parse(readFileSync(join(here, 'package.json'), 'utf8'));
const out = mkdtempSync(join(tmpdir(), 'mk8s-proto-gen-'));
const walk = (d, acc = []) => { for (const n of readdirSync(d)) { const p = join(d, n); statSync(p).isDirectory() ? walk(p, acc) : acc.push(p); } return acc; };
try {
  const args = pkg.scripts.gen.split(/\s+/).slice(1).map((a) => (a === 'src/generated' ? out : a));
  const bin = join(here, '..', 'node_modules', '.bin', 'proto-loader-gen-types');
  execFileSync(bin, args, { cwd: here, stdio: ['ignore', 'ignore', 'inherit'] });
  const want = walk(out).map((p) => relative(out, p)).sort();
  const have = walk(join(here, 'src/generated')).map((p) => relative(join(here, 'src/generated'), p)).sort();
  const diffs = [...new Set([...want, ...have])].filter((f) => {
    try { return readFileSync(join(out, f), 'utf8') !== readFileSync(join(here, 'src/generated', f), 'utf8'); } catch { return true; }
  });
  if (diffs.length) {
    console.error(`proto/src/generated is stale (run \`npm run gen -w proto\`): ${diffs.join(', ')}`);
    process.exit(1);
  }
  console.log('proto/src/generated is up to date');
} finally {
  rmSync(out, { recursive: true, force: true });
}
