/**
 * The mk8s-bridge CNI plugin binary (cni/bin/mk8s-bridge execs node on this file): reads the
 * network config from stdin and CNI_* from the environment, prints the result or error JSON.
 */
import { runPlugin } from './bridge-plugin.js';

const chunks: Buffer[] = [];
for await (const c of process.stdin) chunks.push(c as Buffer);
const out = await runPlugin({ env: process.env, stdin: Buffer.concat(chunks).toString() });
if (out.stdout) process.stdout.write(out.stdout + '\n');
process.exitCode = out.code;
