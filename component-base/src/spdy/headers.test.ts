import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createDeflate, createInflate, constants, type Deflate, type Inflate } from 'node:zlib';
import fc from 'fast-check';
import { Adler32 } from './adler32.js';
import { SPDY3_DICTIONARY } from './dictionary.js';
import { decodeNameValueBlock, encodeNameValueBlock, HeaderCompressor, HeaderDecompressor, type SpdyHeaders } from './headers.js';

const headersArb: fc.Arbitrary<SpdyHeaders> = fc.dictionary(
  fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/), fc.string({ maxLength: 200 }).filter((s) => !s.includes('\0')), { maxKeys: 6, noNullPrototype: true });

/** Runs one block through a persistent zlib stream with a sync flush, as a SPDY peer does. */
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

describe('SPDY/3 header blocks', () => {
  test('the dictionary is the SPDY/3 one (1423 bytes, the Adler-32 peers check)', () => {
    assert.equal(SPDY3_DICTIONARY.length, 1423);
    assert.equal(SPDY3_DICTIONARY.subarray(0, 11).toString('latin1'), '\0\0\0\x07options');
    assert.equal(SPDY3_DICTIONARY.subarray(-7).toString('latin1'), ',enq=0.');
    assert.equal(Adler32.of(SPDY3_DICTIONARY), 0xe3c6a7c2);
  });

  test('name/value blocks round-trip', () => {
    fc.assert(fc.property(headersArb, (h) => { assert.deepEqual(decodeNameValueBlock(encodeNameValueBlock(h)), h); }));
  });

  test('trailing bytes in a block are an error', () => {
    assert.throws(() => decodeNameValueBlock(Buffer.concat([encodeNameValueBlock({ a: 'b' }), Buffer.from([0])])));
  });

  test('a standard inflater with the dictionary reads what the compressor writes, block after block', async () => {
    await fc.assert(fc.asyncProperty(fc.array(headersArb, { minLength: 1, maxLength: 5 }), async (blocks) => {
      const c = new HeaderCompressor();
      const inflate = createInflate({ dictionary: SPDY3_DICTIONARY });
      for (const h of blocks) {
        const block = c.compress(h);
        // Ends like a zlib sync flush, which Go's flate needs to release the block's bytes.
        assert.equal(block.subarray(-5).toString('hex'), '000000ffff');
        assert.deepEqual(decodeNameValueBlock(await flushThrough(inflate, block)), h);
      }
      inflate.destroy();
    }), { numRuns: 30 });
  });

  test('the decompressor reads a real compressed stream, block after block', async () => {
    await fc.assert(fc.asyncProperty(fc.array(headersArb, { minLength: 1, maxLength: 5 }), async (blocks) => {
      const deflate = createDeflate({ dictionary: SPDY3_DICTIONARY });
      const d = new HeaderDecompressor();
      const wire: Buffer[] = [];
      for (const h of blocks) wire.push(await flushThrough(deflate, encodeNameValueBlock(h)));
      // All calls issued at once: they must resolve in order, each to its own block.
      const got = await Promise.all(wire.map((w) => d.decompress(w)));
      assert.deepEqual(got, blocks);
      deflate.destroy();
      d.close();
    }), { numRuns: 30 });
  });

  test('a block compressed with another dictionary is refused', async () => {
    const deflate = createDeflate({ dictionary: Buffer.from('not the spdy dictionary') });
    const d = new HeaderDecompressor();
    await assert.rejects(d.decompress(await flushThrough(deflate, encodeNameValueBlock({ a: 'b' }))));
    await assert.rejects(d.decompress(Buffer.from([1, 2, 3])));
    deflate.destroy();
    d.close();
  });
});
