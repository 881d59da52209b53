/**
 * Port-forward over the WebSocket channel protocol (v4.channel.k8s.io), the one the Python
 * client and client-node speak: a real HTTP server on loopback with the kubelet's handler, a
 * loopback TCP server standing in for the pod, and a `ws` client.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { connect, createServer as createTcpServer, type AddressInfo, type Server as TcpServer } from 'node:net';
import { WebSocket } from 'ws';
import type { Pod } from '@mk8s/api';
import { silentLogger } from '@mk8s/component-base';
import { createPortForwardHandler, type PortForwardHandler } from './portforward.js';

const POD = { metadata: { name: 'web', namespace: 'default', uid: 'u1' }, status: { podIP: '127.0.0.1' } } as Pod;

describe('kubelet port-forward over v4.channel.k8s.io', () => {
  let http: Server; let pod: TcpServer; let handler: PortForwardHandler;
  let port = 0; let podPort = 0;
  before(async () => {
    // The "pod": answers each connection with a greeting, then echoes upper-cased; "bye" ends it.
    pod = createTcpServer((s) => {
      s.write('hi;');
      s.on('data', (b) => { const t = b.toString(); if (t.includes('bye')) s.end('bye;'); else s.write(t.toUpperCase()); });
      s.on('error', () => {});
    });
    await new Promise<void>((r) => pod.listen(0, '127.0.0.1', r));
    podPort = (pod.address() as AddressInfo).port;
    handler = createPortForwardHandler({
      logger: silentLogger(),
      findPod: (ns, n) => (ns === 'default' && n === 'web' ? POD : undefined),
      // Port 1 stands for a port nothing listens on; the rest reach the stand-in pod.
      dial: (_p, n) => connect({ host: '127.0.0.1', port: n === 1 ? 1 : podPort }),
    });
    http = createServer((_req, res) => { res.writeHead(404); res.end(); });
    http.on('upgrade', (req, socket, head) => handler.handleUpgrade(req, socket, head));
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    port = (http.address() as AddressInfo).port;
  });
  after(async () => {
    handler?.close();
    http?.closeAllConnections();
    await new Promise<void>((r) => (http ? http.close(() => r()) : r()));
    await new Promise<void>((r) => (pod ? pod.close(() => r()) : r()));
  });

  /** Opens a channel connection and collects what arrives per channel. */
  const open = (query: string, protocol = 'v4.channel.k8s.io') => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/portForward/default/web?${query}`, protocol ? [protocol] : []);
    const got = new Map<number, Buffer[]>();
    const waiters: (() => void)[] = [];
    let closed = false;
    ws.on('message', (raw: Buffer, isBinary: boolean) => {
      let ch: number; let data: Buffer;
      if (isBinary) { ch = raw[0]!; data = raw.subarray(1); } else { const t = raw.toString(); ch = t.charCodeAt(0) - 0x30; data = Buffer.from(t.slice(1), 'base64'); }
      got.set(ch, [...(got.get(ch) ?? []), data]);
      for (const w of waiters.splice(0)) w();
    });
    ws.on('close', () => { closed = true; for (const w of waiters.splice(0)) w(); });
    const until = async (pred: () => boolean, what: string) => {
      const deadline = Date.now() + 10_000;
      while (!pred()) {
        if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
        await new Promise<void>((r) => { waiters.push(r); setTimeout(r, 200); });
      }
    };
    const text = (ch: number) => Buffer.concat((got.get(ch) ?? []).slice(1)).toString();
    return { ws, got, until, text, isClosed: () => closed, opened: new Promise<void>((r, j) => { ws.on('open', () => r()); ws.on('error', j); }) };
  };

  test('each channel opens with its port; data flows both ways; the pod closing ends the WebSocket', async () => {
    const c = open('port=8080');
    await c.opened;
    assert.equal(c.ws.protocol, 'v4.channel.k8s.io');
    await c.until(() => (c.got.get(0)?.length ?? 0) >= 1 && (c.got.get(1)?.length ?? 0) >= 1, 'the port headers');
    assert.deepEqual([...c.got.get(0)![0]!], [0x90, 0x1f]);
    assert.deepEqual([...c.got.get(1)![0]!], [0x90, 0x1f]);
    await c.until(() => c.text(0) === 'hi;', 'the greeting');
    c.ws.send(Buffer.concat([Buffer.from([0]), Buffer.from('abc')]));
    await c.until(() => c.text(0) === 'hi;ABC', 'the echo');
    c.ws.send(Buffer.concat([Buffer.from([0]), Buffer.from('bye')]));
    await c.until(() => c.isClosed(), 'the close');
    assert.equal(c.text(0), 'hi;ABCbye;');
    assert.equal(c.text(1), '');
  });

  test('two ports on one connection (ports=a,b) use channels 0/1 and 2/3; base64 framing', async () => {
    const c = open('ports=8080,9090', 'v4.base64.channel.k8s.io');
    await c.opened;
    assert.equal(c.ws.protocol, 'v4.base64.channel.k8s.io');
    await c.until(() => c.text(0) === 'hi;' && c.text(2) === 'hi;', 'both greetings');
    assert.deepEqual([...c.got.get(2)![0]!], [0x82, 0x23]);
    c.ws.send('2' + Buffer.from('x').toString('base64'));
    await c.until(() => c.text(2) === 'hi;X', 'the echo on the second port');
    assert.equal(c.text(0), 'hi;');
    c.ws.close();
  });

  test('a port nothing listens on is reported on its error channel', async () => {
    const c = open('port=1');
    await c.opened;
    await c.until(() => c.text(1) !== '' && c.isClosed(), 'the error');
    assert.match(c.text(1), /^error forwarding port 1 to pod default\/web, uid u1: connect ECONNREFUSED/);
  });

  test('a request without ports is refused with a 400', async () => {
    const c = open('');
    await assert.rejects(c.opened, /Unexpected server response: 400/);
  });
});
