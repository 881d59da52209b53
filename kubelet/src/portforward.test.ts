import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { Duplex, PassThrough } from 'node:stream';
import { createDeflate, constants, type Deflate } from 'node:zlib';
import { SPDY3_DICTIONARY, encodeFrame, encodeNameValueBlock, FrameParser, silentLogger, type SpdyFrame as Frame } from '@mk8s/component-base';
import { FakeClock } from '@mk8s/component-base/testing';
import type { Pod } from '@mk8s/api';
import { createPortForwardHandler, parsePorts, type PortForwardOptions } from './portforward.js';

const POD = { metadata: { name: 'web', namespace: 'default', uid: 'u1' }, status: { podIP: '10.244.0.9' } } as Pod;

function flush(z: Deflate, block: Buffer): Promise<Buffer> {
  return new Promise((resolve) => {
    z.write(block);
    z.flush(constants.Z_SYNC_FLUSH, () => {
      const out: Buffer[] = [];
      for (let c: Buffer | null; (c = z.read() as Buffer | null) !== null;) out.push(c);
      resolve(Buffer.concat(out));
    });
  });
}

/** kubectl's side of one upgraded connection, in memory: the HTTP answer, then SPDY frames. */
function client(o: Partial<PortForwardOptions>, headers: Record<string, string>, url = '/portForward/default/web') {
  const toServer = new PassThrough();
  const toClient = new PassThrough();
  const handler = createPortForwardHandler({ logger: silentLogger(), findPod: (ns, n) => (ns === 'default' && n === 'web' ? POD : undefined), ...o });
  handler.handleUpgrade({ method: 'POST', url, headers } as unknown as IncomingMessage, Duplex.from({ readable: toServer, writable: toClient }), Buffer.alloc(0));
  let raw = Buffer.alloc(0);
  let http: string | undefined;
  let body = '';
  const parser = new FrameParser();
  const frames: Frame[] = [];
  const waiters: (() => void)[] = [];
  toClient.on('data', (b: Buffer) => {
    if (http === undefined) {
      raw = Buffer.concat([raw, b]);
      const end = raw.indexOf('\r\n\r\n');
      if (end < 0) return;
      http = raw.subarray(0, end + 4).toString();
      b = raw.subarray(end + 4);
    }
    if (http.startsWith('HTTP/1.1 101')) frames.push(...parser.push(b));
    else body += b.toString();
    for (const w of waiters.splice(0)) w();
  });
  toClient.on('end', () => { for (const w of waiters.splice(0)) w(); });
  const deflate = createDeflate({ dictionary: SPDY3_DICTIONARY });
  let chain = Promise.resolve();
  return {
    http: async () => { while (http === undefined && !toClient.readableEnded) await new Promise<void>((r) => waiters.push(r)); return http ?? raw.toString(); },
    body: async () => { while (!toClient.readableEnded) await new Promise<void>((r) => waiters.push(r)); return body; },
    frames,
    until: async (pred: () => boolean) => { while (!pred()) await new Promise<void>((r) => waiters.push(r)); },
    open: (streamId: number, h: Record<string, string>, fin = false) => {
      chain = chain.then(async () => { toServer.write(encodeFrame({ type: 'syn_stream', streamId, associatedId: 0, priority: 0, fin, unidirectional: false, headerBlock: await flush(deflate, encodeNameValueBlock(h)) })); });
      return chain;
    },
    data: (streamId: number, data: string, fin = false) => { toServer.write(encodeFrame({ type: 'data', streamId, fin, data: Buffer.from(data) })); },
    streamData: (id: number) => Buffer.concat(frames.flatMap((f) => (f.type === 'data' && f.streamId === id ? [f.data] : []))).toString(),
    finished: (id: number) => frames.some((f) => f.type === 'data' && f.streamId === id && f.fin),
    close: () => { deflate.destroy(); handler.close(); },
  };
}

const SPDY = { connection: 'Upgrade', upgrade: 'SPDY/3.1', 'x-stream-protocol-version': 'portforward.k8s.io' };

describe('kubelet port-forward handler', () => {
  test('an unknown pod is a 404 Status', async () => {
    const c = client({}, SPDY, '/portForward/default/nope');
    assert.match(await c.http(), /^HTTP\/1\.1 404 NotFound\r\n/);
    assert.equal((JSON.parse(await c.body()) as { message: string }).message, 'pods "nope" not found');
    c.close();
  });

  test('a client speaking another stream protocol is refused', async () => {
    const c = client({}, { ...SPDY, 'x-stream-protocol-version': 'v4.channel.k8s.io' });
    assert.match(await c.http(), /^HTTP\/1\.1 403 Forbidden/);
    c.close();
  });

  test('pairs the error and data streams, dials the pod port and copies both ways', async () => {
    const podIn = new PassThrough();
    const podOut = new PassThrough();
    const dialled: number[] = [];
    const c = client({ dial: (p, port) => { assert.equal(p, POD); dialled.push(port); return Duplex.from({ readable: podIn, writable: podOut }); } }, SPDY);
    assert.match(await c.http(), /^HTTP\/1\.1 101 Switching Protocols\r\n[\s\S]*X-Stream-Protocol-Version: portforward\.k8s\.io\r\n/);
    await c.open(1, { streamtype: 'error', port: '8080', requestid: '0' }, true);
    await c.open(3, { streamtype: 'data', port: '8080', requestid: '0' });
    c.data(3, 'GET / HTTP/1.0\r\n\r\n', true);
    let sent = '';
    podOut.on('data', (b: Buffer) => { sent += b.toString(); });
    await new Promise((r) => podOut.once('end', r));
    assert.equal(sent, 'GET / HTTP/1.0\r\n\r\n');
    assert.deepEqual(dialled, [8080]);
    podIn.end('HTTP/1.0 200 OK\r\n\r\nhi');
    await c.until(() => c.finished(3) && c.finished(1));
    assert.equal(c.streamData(3), 'HTTP/1.0 200 OK\r\n\r\nhi');
    assert.equal(c.streamData(1), '', 'no error');
    c.close();
  });

  test('a failed dial is reported on the error stream', async () => {
    const c = client({ dial: () => { const d = new PassThrough(); process.nextTick(() => d.destroy(new Error('connect ECONNREFUSED 10.244.0.9:9'))); return d; } }, SPDY);
    await c.open(1, { streamtype: 'error', port: '9', requestid: '7' }, true);
    await c.open(3, { streamtype: 'data', port: '9', requestid: '7' });
    await c.until(() => c.finished(1) && c.finished(3));
    assert.equal(c.streamData(1), 'error forwarding port 9 to pod default/web, uid u1: connect ECONNREFUSED 10.244.0.9:9');
    c.close();
  });

  test('a stream whose partner never comes is failed after the creation timeout', async () => {
    const clock = new FakeClock();
    const c = client({ clock, dial: () => assert.fail('no dial without a pair') }, SPDY);
    await c.open(1, { streamtype: 'error', port: '80', requestid: '1' }, true);
    await c.until(() => c.frames.some((f) => f.type === 'syn_reply'));
    clock.step(29_999);
    assert.equal(c.finished(1), false);
    clock.step(1);
    await c.until(() => c.finished(1));
    assert.match(c.streamData(1), /request=1\) timed out waiting for streams$/);
    c.close();
  });

  test('invalid ports and unknown stream types are refused', async () => {
    const c = client({ dial: () => assert.fail('no dial for a bad port') }, SPDY);
    await c.open(1, { streamtype: 'error', port: '0', requestid: '0' }, true);
    await c.open(3, { streamtype: 'data', port: '0', requestid: '0' });
    await c.open(5, { streamtype: 'bogus', port: '80', requestid: '1' });
    await c.until(() => c.finished(1) && c.frames.some((f) => f.type === 'rst_stream' && f.streamId === 5));
    assert.equal(c.streamData(1), 'invalid port "0"');
    c.close();
  });
});

describe('parsePorts (the channel protocol\'s ?port / ?ports)', () => {
  for (const tc of [
    { q: 'port=8080', want: [8080] },
    { q: 'port=80&port=443', want: [80, 443] },
    { q: 'ports=80,443', want: [80, 443] },
    { q: '', err: /query parameter "port" is required/ },
    { q: 'port=', err: /cannot be empty/ },
    { q: 'port=x', err: /unable to parse "x" as a port/ },
    { q: 'port=70000', err: /unable to parse "70000" as a port/ },
    { q: 'port=0', err: /must be > 0/ },
  ]) {
    test(`?${tc.q}`, () => {
      if (tc.err) assert.throws(() => parsePorts(new URLSearchParams(tc.q)), tc.err);
      else assert.deepEqual(parsePorts(new URLSearchParams(tc.q)), tc.want);
    });
  }
});
