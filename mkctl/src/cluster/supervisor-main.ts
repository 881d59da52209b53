#!/usr/bin/env node
/**
 * The supervisor's binary (`cluster up` starts it detached): `supervisor-main.js --state-dir .mk8s`.
 * SIGTERM/SIGINT end it and leave the supervised processes running (supervisor.ts).
 */
import { join } from 'node:path';
import { Supervisor, supervisorPaths } from './supervisor.js';

const i = process.argv.indexOf('--state-dir');
const state = i > 0 ? process.argv[i + 1] : undefined;
if (!state) { console.error('usage: supervisor-main.js --state-dir DIR'); process.exit(2); }
const ac = new AbortController();
for (const sig of ['SIGTERM', 'SIGINT'] as const) process.on(sig, () => ac.abort());
await new Supervisor({ paths: supervisorPaths({ state, run: join(state, 'run'), logs: join(state, 'logs') }) }).run(ac.signal);
process.exit(0);
