/**
 * `kubectl attach` on the real cluster (`make up`): apiserver pods/attach relay → kubelet
 * /attach (WebSocket v5.channel.k8s.io) → cri-docker's Docker attach on the main process.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { kubectl, kubectlOk, kubectlStream, uniqueName, waitFor } from './lib/cluster.js';

const ns = uniqueName('e2e-attach');

before(async () => {
  kubectlOk(['apply', '-f', '-'], { input: `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${ns}}\n` });
  const manifest = `
apiVersion: v1
kind: Pod
metadata: {name: ticker}
spec:
  automountServiceAccountToken: false
  terminationGracePeriodSeconds: 1
  containers:
  - name: c
    image: busybox
    imagePullPolicy: IfNotPresent
    command: [sh, -c, 'i=0; while true; do echo tick $i; i=$((i+1)); sleep 0.5; done']
---
apiVersion: v1
kind: Pod
metadata: {name: cat}
spec:
  automountServiceAccountToken: false
  terminationGracePeriodSeconds: 1
  restartPolicy: Never
  containers:
  - name: c
    image: busybox
    imagePullPolicy: IfNotPresent
    command: [cat]
    stdin: true
    stdinOnce: true
`;
  await waitFor(() => kubectl(['-n', ns, 'apply', '-f', '-'], { input: manifest }).code === 0, { timeoutMs: 120_000, intervalMs: 1000, what: 'pods created' });
  for (const p of ['ticker', 'cat']) {
    await waitFor(() => kubectl(['-n', ns, 'get', 'pod', p, '-o', 'jsonpath={.status.phase}']).stdout === 'Running', { timeoutMs: 180_000, what: `pod ${p} Running` });
  }
});

after(() => { kubectl(['delete', 'namespace', ns, '--wait=false']); });

test('kubectl attach streams what the main process writes from now on', async () => {
  const s = kubectlStream(['-n', ns, 'attach', 'ticker']);
  try {
    await waitFor(() => /tick \d+\n[\s\S]*tick \d+\n/.test(s.output()), { timeoutMs: 60_000, what: 'two ticks through attach' });
  } finally {
    await s.stop();
  }
  assert.doesNotMatch(s.output(), /error|not supported/i);
  // Detaching leaves the process running.
  assert.equal(kubectl(['-n', ns, 'get', 'pod', 'ticker', '-o', 'jsonpath={.status.phase}']).stdout, 'Running');
});

test('kubectl attach -i feeds stdin to the main process; its end ends the session', () => {
  const r = kubectl(['-n', ns, 'attach', '-i', 'cat'], { input: 'hello through attach\n', timeoutMs: 60_000 });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /hello through attach/);
});
