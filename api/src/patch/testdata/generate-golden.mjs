#!/usr/bin/env node
// Regenerates smp-golden.json: runs every case of smp-cases.json through the real kubectl 1.32's
// client-side strategic merge patch (`kubectl patch --local`, compiled-in Go types), which is the
// same apimachinery code the real apiserver runs. Needs only the kubectl binary, no cluster.
//   node api/src/patch/testdata/generate-golden.mjs
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { tmpdir } from 'node:os';

const here = new URL('.', import.meta.url).pathname;
const cases = JSON.parse(readFileSync(join(here, 'smp-cases.json'), 'utf8'));
const dir = mkdtempSync(join(tmpdir(), 'smp-golden-'));
const golden = {};
try {
  for (const c of cases) {
    const file = join(dir, 'obj.json');
    writeFileSync(file, JSON.stringify(c.original));
    const r = spawnSync('kubectl', ['patch', '--local', '-f', file, '--type=strategic', '-p', JSON.stringify(c.patch), '-o', 'json'],
      { encoding: 'utf8', env: { ...process.env, KUBECONFIG: '/dev/null' } });
    golden[c.name] = r.status === 0 ? { result: JSON.parse(r.stdout) } : { error: r.stderr.trim() };
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
writeFileSync(join(here, 'smp-golden.json'), JSON.stringify(golden, null, 1) + '\n');
console.log(`wrote ${Object.keys(golden).length} cases`);
