import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { Duplex, PassThrough } from 'node:stream';
import { createDeflate, createInflate, constants, type Deflate, type Inflate } from 'node:zlib';
import { SPDY3_DICTIONARY } from './dictionary.js';
import { encodeFrame, FrameParser, RST, type Frame } from './frames.js';
import { decodeNameValueBlock, encodeNameValueBlock, type SpdyHeaders } from './headers.js';
import { SpdySession, type SpdyStream } from './session.js';

function flushThrough(z: Deflate | Inflate, block: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    z.once('error', reject);
    z.write(block);
    z.flush(constants.Z_SYNC_FLUSH, () => {
      const out: Buffer[] = [];
      for (let c: Buffer | null; (c = z.read() as Buffer | null) !== null;) out.push(c);
      resolve(Buffer.concat(out));
    });
  });
}

/** The client half of a session, as spdystream would drive it, over in-memory pipes. */
function harness(onStream: (s: SpdyStream) => void) {
  const toServer = new PassThrough();
  const toClient = new PassThrough();
  const transport = Duplex.from({ readable: toServer, writable: toClient });
  const session = new SpdySession({ transport, onStream });
  const deflate = createDeflate({ dictionary: SPDY3_DICTIONARY });
  const inflate = createInflate({ dictionary: SPDY3_DICTIONARY });
  const parser = new FrameParser();
  const frames: (Frame & { decoded?: SpdyHeaders })[] = [];
  let decoding = Promise.resolve();
  toClient.on('data', (b: Buffer) => {
    for (const f of parser.push(b)) {
      const entry: Frame & { decoded?: SpdyHeaders } = f;
      frames.push(entry);
      if (f.type === 'syn_reply') decoding = decoding.then(async () => { entry.decoded = decodeNameValueBlock(await flushThrough(inflate, f.headerBlock)); });
    }
  });
  let chain = Promise.resolve();
  const send = (f: Frame) => { toServer.write(encodeFrame(f)); };
  const open = (streamId: number, headers: SpdyHeaders, fin = false) => {
    chain = chain.then(async () => send({ type: 'syn_stream', streamId, associatedId: 0, priority: 0, fin, unidirectional: false, headerBlock: await flushThrough(deflate, encodeNameValueBlock(headers)) }));
    return chain;
  };
  const waitFrames = async (pred: (fs: typeof frames) => boolean) => {
    while (!pred(frames)) await once(toClient, 'data');
    await decoding;
  };
  const done = () => { deflate.destroy(); inflate.destroy(); };
  return { session, transport, send, open, frames, waitFrames, toServer, toClient, done };
}

describe('SpdySession', () => {
  test('replies to each stream, delivers its headers and data, and carries the answer back with FIN', async () => {
    const seen: SpdyStream[] = [];
    const h = harness((s) => {
      seen.push(s);
      if (s.headers['streamtype'] === 'data') {
        const got: Buffer[] = [];
        s.on('data', (b: Buffer) => got.push(b));
        s.on('end', () => s.end(Buffer.concat(got).toString().toUpperCase()));
      } else { s.resume(); s.end(); }
    });
    await h.open(1, { streamtype: 'error', port: '8080', requestid: '0' }, true);
    await h.open(3, { streamtype: 'data', port: '8080', requestid: '0' });
    h.send({ type: 'data', streamId: 3, fin: false, data: Buffer.from('hello ') });
    h.send({ type: 'data', streamId: 3, fin: true, data: Buffer.from('spdy') });
    await h.waitFrames((fs) => fs.some((f) => f.type === 'data' && f.streamId === 3 && f.fin));
    assert.deepEqual(seen.map((s) => [s.id, s.headers]), [
      [1, { streamtype: 'error', port: '8080', requestid: '0' }],
      [3, { streamtype: 'data', port: '8080', requestid: '0' }],
    ]);
    const replies = h.frames.filter((f) => f.type === 'syn_reply');
    assert.deepEqual(replies.map((f) => [f.type === 'syn_reply' && f.streamId, f.decoded]), [[1, {}], [3, {}]]);
    const data = Buffer.concat(h.frames.flatMap((f) => (f.type === 'data' && f.streamId === 3 ? [f.data] : [])));
    assert.equal(data.toString(), 'HELLO SPDY');
    // The error stream was finished with an empty FIN, after its reply.
    const i1 = h.frames.findIndex((f) => f.type === 'data' && f.streamId === 1 && f.fin);
    assert.ok(i1 > h.frames.findIndex((f) => f.type === 'syn_reply' && f.streamId === 1));
    if (!seen[1]!.closed) await once(seen[1]!, 'close');
    assert.equal(h.session.streamCount, 0);
    h.done();
  });

  test('echoes the peer\'s pings and ignores settings and window updates', async () => {
    const h = harness(() => undefined);
    h.send({ type: 'settings', flags: 0, entries: [{ flags: 0, id: 7, value: 65536 }] });
    h.send({ type: 'window_update', streamId: 0, delta: 1000 });
    h.send({ type: 'ping', id: 5 });
    await h.waitFrames((fs) => fs.length > 0);
    assert.deepEqual(h.frames, [{ type: 'ping', id: 5 }]);
    h.done();
  });

  test('a peer reset closes the stream without an error event', async () => {
    let stream: SpdyStream | undefined;
    const h = harness((s) => { stream = s; });
    await h.open(1, { streamtype: 'data' });
    await h.waitFrames((fs) => fs.some((f) => f.type === 'syn_reply'));
    h.send({ type: 'rst_stream', streamId: 1, status: RST.CANCEL });
    if (!stream!.closed) await once(stream!, 'close');
    assert.equal(stream!.aborted, true);
    h.done();
  });

  test('a stream nobody reads pauses the transport until it is read', async () => {
    let stream: SpdyStream | undefined;
    const h = harness((s) => { stream = s; });
    await h.open(1, { streamtype: 'data' });
    await h.waitFrames((fs) => fs.some((f) => f.type === 'syn_reply'));
    const chunk = Buffer.alloc(32 * 1024, 7);
    for (let i = 0; i < 8; i++) h.send({ type: 'data', streamId: 1, fin: i === 7, data: chunk });
    for (let i = 0; i < 1000 && !h.transport.isPaused(); i++) await new Promise((r) => setImmediate(r));
    assert.equal(h.transport.isPaused(), true);
    let got = 0;
    stream!.on('data', (b: Buffer) => { got += b.length; });
    await once(stream!, 'end');
    assert.equal(got, 8 * chunk.length);
    assert.equal(h.transport.isPaused(), false);
    h.done();
  });

  test('a local reset sends RST_STREAM', async () => {
    const h = harness((s) => s.reset());
    await h.open(1, { streamtype: 'data' });
    await h.waitFrames((fs) => fs.some((f) => f.type === 'rst_stream'));
    assert.deepEqual(h.frames.find((f) => f.type === 'rst_stream'), { type: 'rst_stream', streamId: 1, status: RST.CANCEL });
    h.done();
  });

  test('a garbled header block ends the session and aborts its streams', async () => {
    let stream: SpdyStream | undefined;
    const h = harness((s) => { stream = s; });
    await h.open(1, { streamtype: 'data' });
    await h.waitFrames((fs) => fs.some((f) => f.type === 'syn_reply'));
    const closed = once(h.session, 'close');
    const err = once(h.session, 'protocolError');
    h.send({ type: 'syn_stream', streamId: 3, associatedId: 0, priority: 0, fin: false, unidirectional: false, headerBlock: Buffer.from('garbage') });
    await err;
    await closed;
    assert.equal(stream!.destroyed, true);
    h.done();
  });
});
