import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pidMatches } from './processes.js';

// This test's own process: node with its argv, as /proc/<pid>/cmdline shows it.
const self = { command: process.execPath, args: process.argv.slice(1, 3) };

for (const tc of [
  { name: 'its own command and arguments', spec: self, want: true },
  { name: 'the command by basename', spec: { command: 'node', args: [] }, want: true },
  { name: 'another command (a reused pid)', spec: { command: 'etcd', args: [] }, want: false },
  { name: 'the command with other arguments', spec: { command: process.execPath, args: ['/nonexistent/kubelet.js'] }, want: false },
]) test(`pidMatches: ${tc.name}`, () => assert.equal(pidMatches(process.pid, tc.spec), tc.want));

test('pidMatches: a pid that is gone matches nothing', () => assert.equal(pidMatches(2 ** 22 + 1, self), false));
