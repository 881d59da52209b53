#!/usr/bin/env node
// `make chaos`: the robustness suite of issue 21 on a fresh cluster, in one run.
//   node scripts/chaos.mjs [path-filter…]
// Type-checks test/chaos, brings a cluster up (`cluster up --nodes $NODES` plus $CHAOS_UP_FLAGS, default
// `--apiservers 3`: T7 kills apiservers behind the balancer),
// runs test/e2e/robustness.e2e.test.ts (the subset make test also runs) and every
// test/chaos/**/*.chaos.test.ts, prints every FIGURE line (each carries its goal), brings the
// cluster down, and exits non-zero when a test (a goal) failed or the run overran $CHAOS_TIMEOUT_S.
// The log of the whole run is kept at .mk8s/logs/chaos.log.
// MK8S_SHARED_DOCKERD=1 (the worktree scripts): leave a dockerd this run did not start alone.
import { spawn, spawnSync } from 'node:child_process';
import { createWriteStream, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const filter = process.argv.slice(2);
const nodes = process.env.NODES ?? '3';
const upFlags = (process.env.CHAOS_UP_FLAGS ?? '--apiservers 3').split(/\s+/).filter(Boolean);
const budgetMs = Number(process.env.CHAOS_TIMEOUT_S ?? 2400) * 1000;
const mkctl = (args) => spawnSync(process.execPath, [join(root, 'mkctl/dist/main.js'), ...args], { cwd: root, stdio: 'inherit', env: { ...process.env, MK8S_ROOT: root } });
const sharedDockerd = () => { if (process.env.MK8S_SHARED_DOCKERD) rmSync(join(root, '.mk8s/run/dockerd.pid'), { force: true }); };

mkdirSync(join(root, '.mk8s/logs'), { recursive: true });
const log = createWriteStream(join(root, '.mk8s/logs/chaos.log'));
const t0 = Date.now();
let output = '';
const emit = (s) => { process.stdout.write(s); log.write(s); output += s; };

const tc = spawnSync('npx', ['tsc', '-p', 'test/chaos'], { cwd: root, encoding: 'utf8' });
if (tc.status !== 0) { console.error(`test/chaos does not type-check:\n${tc.stdout}${tc.stderr}`); process.exit(1); }

// Every step runs against what is left of the budget; a child that overruns is killed (its group).
function run(args) {
  return new Promise((resolve) => {
    const left = budgetMs - (Date.now() - t0);
    if (left <= 0) return resolve({ code: 124, timedOut: true });
    const child = spawn(process.execPath, [join(root, 'scripts/run-tests.mjs'), ...args], { cwd: root, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, MK8S_ROOT: root } });
    child.stdout.on('data', (d) => emit(d.toString()));
    child.stderr.on('data', (d) => emit(d.toString()));
    let timedOut = false;
    const timer = setTimeout(() => { timedOut = true; emit(`\nchaos: the run overran its ${budgetMs / 1000}s budget: stopping it\n`); try { process.kill(-child.pid, 'SIGTERM'); } catch {} setTimeout(() => { try { process.kill(-child.pid, 'SIGKILL'); } catch {} }, 10_000).unref(); }, left);
    child.on('close', (code) => { clearTimeout(timer); resolve({ code: code ?? 1, timedOut }); });
  });
}

let rc = 0;
const steps = [];
const onSignal = () => { sharedDockerd(); mkctl(['cluster', 'down']); process.exit(130); };
process.once('SIGINT', onSignal); process.once('SIGTERM', onSignal);
sharedDockerd();
const up = mkctl(['cluster', 'up', '--nodes', nodes, ...upFlags]);
sharedDockerd();
if (up.status !== 0) { rc = 1; steps.push('cluster up FAILED'); } else {
  // With a filter (one test while developing), robustness.e2e runs only when the filter names it.
  const robust = filter.length === 0 || filter.some((f) => 'test/e2e/robustness.e2e.test.ts'.includes(f));
  if (robust) { const r = await run(['e2e', 'test/e2e/robustness.e2e.test.ts']); steps.push(`robustness.e2e: ${r.timedOut ? 'TIMED OUT' : r.code === 0 ? 'ok' : 'FAILED'}`); if (r.code !== 0) rc = 1; }
  const r = await run(['chaos', ...filter]);
  steps.push(`chaos tests: ${r.timedOut ? 'TIMED OUT' : r.code === 0 ? 'ok' : 'FAILED'}`);
  if (r.code !== 0) rc = 1;
}
sharedDockerd();
const down = mkctl(['cluster', 'down']);
if (down.status !== 0) { rc = 1; steps.push('cluster down FAILED'); }

const figures = [...output.matchAll(/^\s*FIGURE (.*)$/gm)].map((m) => m[1]);
const failed = [...output.matchAll(/^\s*✖ (.*?)(?: \([\d.]+m?s\))?$/gm)].map((m) => m[1]).filter((x) => !/^failing tests:$/.test(x));
const summary = [
  '', `==== make chaos: ${((Date.now() - t0) / 1000).toFixed(0)}s, ${rc === 0 ? 'every goal met' : 'GOALS MISSED'} ====`,
  ...figures.map((f) => `  ${f}`),
  ...(figures.length ? [] : ['  (no FIGURE line printed)']),
  ...steps.map((s) => `  step ${s}`),
  ...[...new Set(failed)].map((f) => `  FAILED ${f}`),
  `  log: .mk8s/logs/chaos.log`, '',
].join('\n');
emit(summary);
log.end(() => process.exit(rc));
