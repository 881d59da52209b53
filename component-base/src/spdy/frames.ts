/**
 * SPDY/3 framing (draft-mbelshe-httpbis-spdy-00 §2.2): the 8-byte frame header, the control
 * frames kubectl's port-forward uses, DATA frames, and an incremental parser. Header blocks are
 * carried compressed here; `headers.ts` turns them into name/value pairs.
 */

export const SPDY_VERSION = 3;

/** Control frame types (§2.6). */
export const FRAME = {
  SYN_STREAM: 1, SYN_REPLY: 2, RST_STREAM: 3, SETTINGS: 4, PING: 6, GOAWAY: 7, HEADERS: 8, WINDOW_UPDATE: 9,
} as const;

export const FLAG_FIN = 0x01;
export const FLAG_UNIDIRECTIONAL = 0x02;

/** RST_STREAM status codes (§2.6.3). */
export const RST = {
  PROTOCOL_ERROR: 1, INVALID_STREAM: 2, REFUSED_STREAM: 3, UNSUPPORTED_VERSION: 4, CANCEL: 5,
  INTERNAL_ERROR: 6, FLOW_CONTROL_ERROR: 7, STREAM_IN_USE: 8, STREAM_ALREADY_CLOSED: 9,
} as const;

/** The largest payload a frame's 24-bit length can carry. */
export const MAX_FRAME_PAYLOAD = 0xffffff;

export type Frame =
  | { type: 'data'; streamId: number; fin: boolean; data: Buffer }
  | { type: 'syn_stream'; streamId: number; associatedId: number; priority: number; fin: boolean; unidirectional: boolean; headerBlock: Buffer }
  | { type: 'syn_reply'; streamId: number; fin: boolean; headerBlock: Buffer }
  | { type: 'headers'; streamId: number; fin: boolean; headerBlock: Buffer }
  | { type: 'rst_stream'; streamId: number; status: number }
  | { type: 'settings'; flags: number; entries: { flags: number; id: number; value: number }[] }
  | { type: 'ping'; id: number }
  | { type: 'goaway'; lastGoodStreamId: number; status: number }
  | { type: 'window_update'; streamId: number; delta: number }
  /** A control frame of a type this codec does not model; skipped, as §2.2.1 asks. */
  | { type: 'unknown'; controlType: number; flags: number; payload: Buffer };

export class SpdyProtocolError extends Error {
  constructor(message: string) { super(message); this.name = 'SpdyProtocolError'; }
}

const u31 = (b: Buffer, off: number) => b.readUInt32BE(off) & 0x7fffffff;

function control(type: number, flags: number, payload: Buffer): Buffer {
  if (payload.length > MAX_FRAME_PAYLOAD) throw new RangeError(`SPDY control frame too large (${payload.length} bytes)`);
  const h = Buffer.allocUnsafe(8);
  h.writeUInt16BE(0x8000 | SPDY_VERSION, 0);
  h.writeUInt16BE(type, 2);
  h.writeUInt32BE(((flags & 0xff) << 24 | payload.length) >>> 0, 4);
  return Buffer.concat([h, payload]);
}

/** Serializes one frame. DATA payloads above MAX_FRAME_PAYLOAD throw: split them first. */
export function encodeFrame(f: Frame): Buffer {
  switch (f.type) {
    case 'data': {
      if (f.data.length > MAX_FRAME_PAYLOAD) throw new RangeError(`SPDY data frame too large (${f.data.length} bytes)`);
      const h = Buffer.allocUnsafe(8);
      h.writeUInt32BE(f.streamId & 0x7fffffff, 0);
      h.writeUInt32BE(((f.fin ? FLAG_FIN : 0) << 24 | f.data.length) >>> 0, 4);
      return Buffer.concat([h, f.data]);
    }
    case 'syn_stream': {
      const p = Buffer.alloc(10);
      p.writeUInt32BE(f.streamId & 0x7fffffff, 0);
      p.writeUInt32BE(f.associatedId & 0x7fffffff, 4);
      p[8] = (f.priority & 0x7) << 5;
      return control(FRAME.SYN_STREAM, (f.fin ? FLAG_FIN : 0) | (f.unidirectional ? FLAG_UNIDIRECTIONAL : 0), Buffer.concat([p, f.headerBlock]));
    }
    case 'syn_reply':
    case 'headers': {
      const p = Buffer.allocUnsafe(4);
      p.writeUInt32BE(f.streamId & 0x7fffffff, 0);
      return control(f.type === 'syn_reply' ? FRAME.SYN_REPLY : FRAME.HEADERS, f.fin ? FLAG_FIN : 0, Buffer.concat([p, f.headerBlock]));
    }
    case 'rst_stream': {
      const p = Buffer.allocUnsafe(8);
      p.writeUInt32BE(f.streamId & 0x7fffffff, 0);
      p.writeUInt32BE(f.status >>> 0, 4);
      return control(FRAME.RST_STREAM, 0, p);
    }
    case 'settings': {
      const p = Buffer.allocUnsafe(4 + 8 * f.entries.length);
      p.writeUInt32BE(f.entries.length, 0);
      f.entries.forEach((e, i) => {
        p.writeUInt32BE(((e.flags & 0xff) << 24 | (e.id & 0xffffff)) >>> 0, 4 + 8 * i);
        p.writeUInt32BE(e.value >>> 0, 8 + 8 * i);
      });
      return control(FRAME.SETTINGS, f.flags, p);
    }
    case 'ping': {
      const p = Buffer.allocUnsafe(4);
      p.writeUInt32BE(f.id >>> 0, 0);
      return control(FRAME.PING, 0, p);
    }
    case 'goaway': {
      const p = Buffer.allocUnsafe(8);
      p.writeUInt32BE(f.lastGoodStreamId & 0x7fffffff, 0);
      p.writeUInt32BE(f.status >>> 0, 4);
      return control(FRAME.GOAWAY, 0, p);
    }
    case 'window_update': {
      const p = Buffer.allocUnsafe(8);
      p.writeUInt32BE(f.streamId & 0x7fffffff, 0);
      p.writeUInt32BE(f.delta & 0x7fffffff, 4);
      return control(FRAME.WINDOW_UPDATE, 0, p);
    }
    case 'unknown':
      return control(f.controlType, f.flags, f.payload);
  }
}

function decodeControl(type: number, flags: number, p: Buffer): Frame {
  const need = (n: number) => { if (p.length < n) throw new SpdyProtocolError(`SPDY control frame type ${type} too short (${p.length} bytes)`); };
  const fin = (flags & FLAG_FIN) !== 0;
  switch (type) {
    case FRAME.SYN_STREAM:
      need(10);
      return { type: 'syn_stream', streamId: u31(p, 0), associatedId: u31(p, 4), priority: p[8]! >> 5, fin, unidirectional: (flags & FLAG_UNIDIRECTIONAL) !== 0, headerBlock: p.subarray(10) };
    case FRAME.SYN_REPLY:
      need(4);
      return { type: 'syn_reply', streamId: u31(p, 0), fin, headerBlock: p.subarray(4) };
    case FRAME.HEADERS:
      need(4);
      return { type: 'headers', streamId: u31(p, 0), fin, headerBlock: p.subarray(4) };
    case FRAME.RST_STREAM:
      need(8);
      return { type: 'rst_stream', streamId: u31(p, 0), status: p.readUInt32BE(4) };
    case FRAME.SETTINGS: {
      need(4);
      const n = p.readUInt32BE(0);
      need(4 + 8 * n);
      const entries = [];
      for (let i = 0; i < n; i++) {
        const w = p.readUInt32BE(4 + 8 * i);
        entries.push({ flags: w >>> 24, id: w & 0xffffff, value: p.readUInt32BE(8 + 8 * i) });
      }
      return { type: 'settings', flags, entries };
    }
    case FRAME.PING:
      need(4);
      return { type: 'ping', id: p.readUInt32BE(0) };
    case FRAME.GOAWAY:
      need(4);
      // SPDY/2 peers omit the status; treat it as OK.
      return { type: 'goaway', lastGoodStreamId: u31(p, 0), status: p.length >= 8 ? p.readUInt32BE(4) : 0 };
    case FRAME.WINDOW_UPDATE:
      need(8);
      return { type: 'window_update', streamId: u31(p, 0), delta: p.readUInt32BE(4) & 0x7fffffff };
    default:
      return { type: 'unknown', controlType: type, flags, payload: p };
  }
}

/**
 * Incremental frame parser: feed it bytes as they arrive (in any split: the WebSocket tunnel
 * delivers frames cut across messages) and it returns every frame completed so far. Throws
 * SpdyProtocolError on a control frame of another SPDY version.
 */
export class FrameParser {
  private buf: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): Frame[] {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    const out: Frame[] = [];
    let off = 0;
    while (this.buf.length - off >= 8) {
      const len = this.buf.readUInt32BE(off + 4) & 0xffffff;
      if (this.buf.length - off < 8 + len) break;
      const flags = this.buf[off + 4]!;
      // Copy the payload out so frames do not pin the (possibly large) receive buffer.
      const payload = Buffer.from(this.buf.subarray(off + 8, off + 8 + len));
      if (this.buf[off]! & 0x80) {
        const version = this.buf.readUInt16BE(off) & 0x7fff;
        if (version !== SPDY_VERSION) throw new SpdyProtocolError(`unsupported SPDY version ${version}`);
        out.push(decodeControl(this.buf.readUInt16BE(off + 2), flags, payload));
      } else {
        out.push({ type: 'data', streamId: u31(this.buf, off), fin: (flags & FLAG_FIN) !== 0, data: payload });
      }
      off += 8 + len;
    }
    this.buf = off === this.buf.length ? Buffer.alloc(0) : this.buf.subarray(off);
    return out;
  }

  /** Bytes received but not yet forming a whole frame. */
  get pending(): number { return this.buf.length; }
}
