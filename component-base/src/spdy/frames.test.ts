import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { encodeFrame, FrameParser, SpdyProtocolError, type Frame } from './frames.js';

const u31 = fc.integer({ min: 0, max: 0x7fffffff });
const u32 = fc.integer({ min: 0, max: 0xffffffff });
const bytes = (max: number) => fc.uint8Array({ maxLength: max }).map((a) => Buffer.from(a));

const frameArb: fc.Arbitrary<Frame> = fc.oneof(
  fc.record({ type: fc.constant('data' as const), streamId: u31, fin: fc.boolean(), data: bytes(300) }),
  fc.record({ type: fc.constant('syn_stream' as const), streamId: u31, associatedId: u31, priority: fc.integer({ min: 0, max: 7 }), fin: fc.boolean(), unidirectional: fc.boolean(), headerBlock: bytes(64) }),
  fc.record({ type: fc.constant('syn_reply' as const), streamId: u31, fin: fc.boolean(), headerBlock: bytes(64) }),
  fc.record({ type: fc.constant('headers' as const), streamId: u31, fin: fc.boolean(), headerBlock: bytes(64) }),
  fc.record({ type: fc.constant('rst_stream' as const), streamId: u31, status: u32 }),
  fc.record({ type: fc.constant('settings' as const), flags: fc.integer({ min: 0, max: 255 }), entries: fc.array(fc.record({ flags: fc.integer({ min: 0, max: 255 }), id: fc.integer({ min: 0, max: 0xffffff }), value: u32 }, { noNullPrototype: true }), { maxLength: 4 }) }),
  fc.record({ type: fc.constant('ping' as const), id: u32 }),
  fc.record({ type: fc.constant('goaway' as const), lastGoodStreamId: u31, status: u32 }),
  fc.record({ type: fc.constant('window_update' as const), streamId: u31, delta: u31 }),
);

describe('SPDY/3 frames', () => {
  test('every frame survives encode and parse, however the bytes are split', () => {
    fc.assert(fc.property(fc.array(frameArb, { maxLength: 8 }), fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 20 }), (frames, cuts) => {
      const wire = Buffer.concat(frames.map(encodeFrame));
      const p = new FrameParser();
      const got: Frame[] = [];
      let off = 0;
      for (let i = 0; off < wire.length; i++) {
        const n = cuts[i % cuts.length]!;
        got.push(...p.push(wire.subarray(off, off + n)));
        off += n;
      }
      assert.deepEqual(got, frames.map((f) => ({ ...f })));
      assert.equal(p.pending, 0);
    }));
  });

  test('encodes the header layout kubectl expects', () => {
    // Control bit + version 3, type 6 (PING), no flags, length 4.
    assert.equal(encodeFrame({ type: 'ping', id: 7 }).toString('hex'), '800300060000000400000007');
    // DATA on stream 3 with FIN and two bytes.
    assert.equal(encodeFrame({ type: 'data', streamId: 3, fin: true, data: Buffer.from('hi') }).toString('hex'), '00000003010000026869');
  });

  test('rejects control frames of another SPDY version', () => {
    const f = encodeFrame({ type: 'ping', id: 1 });
    f.writeUInt16BE(0x8002, 0);
    assert.throws(() => new FrameParser().push(f), SpdyProtocolError);
  });

  test('reports short control frames instead of reading past them', () => {
    const f = Buffer.from('8003000600000002aaaa', 'hex');
    assert.throws(() => new FrameParser().push(f), SpdyProtocolError);
  });
});
