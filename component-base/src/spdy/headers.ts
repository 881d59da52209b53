/**
 * SPDY/3 header blocks (§2.6.10): a u32 count of name/value pairs, each a u32-length-prefixed
 * string, compressed as ONE zlib stream per direction primed with the SPDY/3 dictionary. Every
 * block ends on a sync flush, and the peer's inflater keeps its window across blocks, so blocks
 * must be decoded in order and never skipped (an ignored HEADERS frame would desync the stream).
 */
import { Adler32 } from './adler32.js';
import { createInflate, constants, type Inflate } from 'node:zlib';
import { SPDY3_DICTIONARY } from './dictionary.js';
import { SpdyProtocolError } from './frames.js';

/** Header names are lowercase in SPDY/3; several values of one name are joined with NUL. */
export type SpdyHeaders = Record<string, string>;

/** Encodes pairs into the uncompressed name/value block. */
export function encodeNameValueBlock(h: SpdyHeaders): Buffer {
  const entries = Object.entries(h);
  const parts: Buffer[] = [u32(entries.length)];
  for (const [k, v] of entries) {
    const kb = Buffer.from(k.toLowerCase(), 'utf8');
    const vb = Buffer.from(v, 'utf8');
    parts.push(u32(kb.length), kb, u32(vb.length), vb);
  }
  return Buffer.concat(parts);
}

/** Decodes an uncompressed name/value block; throws SpdyProtocolError unless it is consumed exactly. */
export function decodeNameValueBlock(b: Buffer): SpdyHeaders {
  let off = 0;
  const take = (n: number) => {
    if (off + n > b.length) throw new SpdyProtocolError('truncated SPDY header block');
    const s = b.subarray(off, off + n);
    off += n;
    return s;
  };
  const count = take(4).readUInt32BE(0);
  const out: SpdyHeaders = {};
  for (let i = 0; i < count; i++) {
    const name = take(take(4).readUInt32BE(0)).toString('utf8');
    const value = take(take(4).readUInt32BE(0)).toString('utf8');
    // A hostile peer's `__proto__` would otherwise reach the prototype; no real header has that name.
    if (name === '__proto__') continue;
    out[name] = out[name] === undefined ? value : `${out[name]}\0${value}`;
  }
  if (off !== b.length) throw new SpdyProtocolError(`SPDY header block has ${b.length - off} trailing bytes`);
  return out;
}

function u32(n: number): Buffer {
  const b = Buffer.allocUnsafe(4);
  b.writeUInt32BE(n >>> 0, 0);
  return b;
}

const MAX_STORED = 0xffff;
const SYNC_MARKER = Buffer.from([0, 0, 0, 0xff, 0xff]);

/**
 * The sending side's zlib stream, written as stored (uncompressed) deflate blocks. Header blocks
 * here are a few bytes, so compression buys nothing, and stored blocks keep encoding synchronous:
 * a SYN_REPLY can be queued before the DATA frames that follow it without an async hop. The first
 * block carries the zlib header with FDICT and the dictionary's Adler-32, which the peer checks.
 * Not thread-safe in the trivial sense: calls must be made in frame order.
 */
export class HeaderCompressor {
  private started = false;

  compress(h: SpdyHeaders): Buffer {
    const raw = encodeNameValueBlock(h);
    const parts: Buffer[] = [];
    if (!this.started) {
      this.started = true;
      // CMF 0x78 (deflate, 32K window), FLG 0x20 (FDICT, level 0); 0x7820 % 31 === 0, so FCHECK is 0.
      const hdr = Buffer.from([0x78, 0x20, 0, 0, 0, 0]);
      hdr.writeUInt32BE(Adler32.of(SPDY3_DICTIONARY), 2);
      parts.push(hdr);
    }
    for (let off = 0; off < raw.length; off += MAX_STORED) {
      const chunk = raw.subarray(off, off + MAX_STORED);
      // BFINAL=0, BTYPE=00, then LEN and its one's complement, little endian.
      const b = Buffer.allocUnsafe(5);
      b[0] = 0;
      b.writeUInt16LE(chunk.length, 1);
      b.writeUInt16LE(~chunk.length & 0xffff, 3);
      parts.push(b, chunk);
    }
    // The empty stored block a sync flush ends with. Go's flate hands out a block's bytes only
    // when it reaches the next block header; without this marker it reads past the frame's end,
    // latches ErrUnexpectedEOF, and the peer's next header block fails (kubectl: "lost connection").
    parts.push(SYNC_MARKER);
    return Buffer.concat(parts);
  }
}

/**
 * The receiving side's persistent inflater. `decompress` calls are serialized internally and
 * resolve in call order; a corrupt block rejects that call and every later one (the zlib stream
 * is dead, so the session must be torn down).
 */
export class HeaderDecompressor {
  private readonly z: Inflate = createInflate({ dictionary: SPDY3_DICTIONARY });
  private tail: Promise<unknown> = Promise.resolve();
  private failed: Error | undefined;

  constructor() {
    this.z.on('error', (err) => { this.failed ??= err; });
  }

  decompress(block: Buffer): Promise<SpdyHeaders> {
    const run = () => new Promise<SpdyHeaders>((resolve, reject) => {
      if (this.failed) { reject(this.failed); return; }
      const onError = (err: Error) => reject(err);
      this.z.once('error', onError);
      this.z.write(block);
      // The stream stays paused: after the flush completes, everything this block produced sits
      // in the readable buffer, in order; reading it here ties output to exactly this block.
      this.z.flush(constants.Z_SYNC_FLUSH, () => {
        this.z.off('error', onError);
        if (this.failed) { reject(this.failed); return; }
        const chunks: Buffer[] = [];
        for (let c: Buffer | null; (c = this.z.read() as Buffer | null) !== null;) chunks.push(c);
        try { resolve(decodeNameValueBlock(Buffer.concat(chunks))); } catch (err) { reject(err as Error); }
      });
    });
    const p = this.tail.then(run, run);
    this.tail = p.catch(() => undefined);
    return p;
  }

  close(): void { this.z.destroy(); }
}
