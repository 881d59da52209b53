/**
 * execInPod against a local WebSocket server speaking the channel protocol as the apiserver's
 * exec proxy does (the real proxy is tested end to end in test/e2e).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { createClientset, execInPod } from '@mk8s/client';

let server: Server;
let wss: WebSocketServer;
let url: string;
const seen: { url: string; protocol: string; auth: string }[] = [];

before(async () => {
  server = createServer();
  wss = new WebSocketServer({ server, handleProtocols: (protocols) => (protocols.has('v5.channel.k8s.io') ? 'v5.channel.k8s.io' : false) });
  wss.on('connection', (ws, req) => {
    seen.push({ url: req.url ?? '', protocol: ws.protocol, auth: req.headers.authorization ?? '' });
    const q = new URL(req.url ?? '', 'http://x').searchParams;
    const cmd = q.getAll('command');
    let stdin = '';
    const send = (ch: number, s: string) => ws.send(Buffer.concat([Buffer.from([ch]), Buffer.from(s)]));
    const finish = (code: number) => {
      send(3, JSON.stringify(code === 0
        ? { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success' }
        : { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'NonZeroExitCode', message: `command terminated with non-zero exit code: exit status ${code}`, details: { causes: [{ reason: 'ExitCode', message: String(code) }] } }));
      ws.close(1000);
    };
    if (cmd[0] === 'cat') {
      ws.on('message', (d: Buffer) => {
        if (d[0] === 0) stdin += d.subarray(1).toString();
        if (d[0] === 255 && d[1] === 0) { send(1, stdin.toUpperCase()); finish(0); }
      });
      return;
    }
    send(1, `out:${cmd.join(' ')}\n`);
    send(2, 'err\n');
    finish(cmd[0] === 'false' ? 3 : 0);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(async () => {
  for (const c of wss.clients) c.terminate();
  wss.close();
  await new Promise((r) => server.close(r));
});

describe('execInPod', () => {
  test('runs a command, collects stdout/stderr and a zero exit code', async () => {
    const c = createClientset({ restConfig: { server: url, namespace: 'default', token: 't0k' } });
    const r = await execInPod(c, { namespace: 'ns1', name: 'web', container: 'app', command: ['echo', 'hi there'] });
    assert.equal(r.stdout, 'out:echo hi there\n');
    assert.equal(r.stderr, 'err\n');
    assert.equal(r.exitCode, 0);
    const s = seen.at(-1)!;
    assert.equal(s.protocol, 'v5.channel.k8s.io');
    assert.equal(s.auth, 'Bearer t0k');
    assert.match(s.url, /^\/api\/v1\/namespaces\/ns1\/pods\/web\/exec\?command=echo&command=hi\+there&container=app&stdout=true&stderr=true$/);
    await c.close();
  });

  test('reports a non-zero exit code from the error channel', async () => {
    const c = createClientset({ server: url });
    const r = await execInPod(c, { namespace: 'default', name: 'web', command: ['false'] });
    assert.equal(r.exitCode, 3);
    assert.equal(r.status.reason, 'NonZeroExitCode');
    await c.close();
  });

  test('sends stdin and closes it (v5)', async () => {
    const c = createClientset({ server: url });
    const r = await execInPod(c, { namespace: 'default', name: 'web', command: ['cat'], stdin: 'hello' });
    assert.equal(r.stdout, 'HELLO');
    assert.equal(r.exitCode, 0);
    await c.close();
  });
});
