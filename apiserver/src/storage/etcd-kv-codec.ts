/**
 * Protobuf encoding of the few etcdserverpb.KV messages the apiserver's storage sends and reads
 * (rpc.proto, kv.proto of etcd 3.4), written by hand: each request is sized first and written into
 * one Buffer that already carries gRPC's 5-byte message prefix, and responses are read in place
 * (keys and values are views into the response, not copies). Revisions are plain numbers (etcd's
 * int64 revisions stay far below 2^53).
 */

/** A key-value pair as etcd returns it (mvccpb.KeyValue). key and value are views into the response. */
export interface KeyValue {
  key: Buffer;
  value: Buffer;
  createRevision: number;
  modRevision: number;
  version: number;
}

export interface RangeRequest {
  key: Buffer;
  /** Range end (exclusive); unset: the single key. */
  rangeEnd?: Buffer;
  /** 0: no limit. */
  limit?: number;
  /** 0: the current revision. */
  revision?: number;
  countOnly?: boolean;
}

export interface RangeResponse { revision: number; kvs: KeyValue[]; more: boolean; count: number }

export interface PutRequest { key: Buffer; value: Buffer; prevKv?: boolean }
export interface DeleteRangeRequest { key: Buffer; rangeEnd?: Buffer; prevKv?: boolean }

/** etcd's Compare: target's value compared with result against the given number (or bytes for 'Value'). */
export interface Compare {
  key: Buffer;
  target: 'Version' | 'Create' | 'Mod' | 'Value';
  result: 'Equal' | 'Greater' | 'Less' | 'NotEqual';
  /** The version, create or mod revision (by target), or the value bytes for 'Value'. */
  operand: number | Buffer;
}

export type RequestOp = { range: RangeRequest } | { put: PutRequest } | { deleteRange: DeleteRangeRequest };

export interface TxnRequest { compare: Compare[]; success: RequestOp[]; failure: RequestOp[] }

export interface DeleteRangeResponse { revision: number; deleted: number; prevKvs: KeyValue[] }
export interface ResponseOp { range?: RangeResponse; deleteRange?: DeleteRangeResponse; put?: { revision: number } }
export interface TxnResponse { revision: number; succeeded: boolean; responses: ResponseOp[] }

const COMPARE_TARGET = { Version: 0, Create: 1, Mod: 2, Value: 3 } as const;
const COMPARE_RESULT = { Equal: 0, Greater: 1, Less: 2, NotEqual: 3 } as const;
// Compare's target_union field numbers, by target.
const COMPARE_OPERAND_FIELD = { Version: 4, Create: 5, Mod: 6, Value: 7 } as const;

// ---- sizes ----

function varintSize(n: number): number {
  let s = 1;
  while (n >= 128) { n = Math.floor(n / 128); s++; }
  return s;
}
const tagSize = (field: number): number => varintSize(field << 3);
const bytesSize = (field: number, b: Buffer | undefined): number => (b && b.length ? tagSize(field) + varintSize(b.length) + b.length : 0);
const uintSize = (field: number, n: number | undefined): number => (n ? tagSize(field) + varintSize(n) : 0);
const boolSize = (field: number, v: boolean | undefined): number => (v ? tagSize(field) + 1 : 0);
const msgSize = (field: number, len: number): number => tagSize(field) + varintSize(len) + len;

function rangeSize(r: RangeRequest): number {
  return bytesSize(1, r.key) + bytesSize(2, r.rangeEnd) + uintSize(3, r.limit) + uintSize(4, r.revision) + boolSize(9, r.countOnly);
}
function putSize(p: PutRequest): number { return bytesSize(1, p.key) + bytesSize(2, p.value) + boolSize(4, p.prevKv); }
function deleteRangeSize(d: DeleteRangeRequest): number { return bytesSize(1, d.key) + bytesSize(2, d.rangeEnd) + boolSize(3, d.prevKv); }
function compareSize(c: Compare): number {
  const f = COMPARE_OPERAND_FIELD[c.target];
  // A oneof member is on the wire even when zero: etcd tells "mod_revision = 0" from "unset".
  const operand = typeof c.operand === 'number'
    ? tagSize(f) + varintSize(c.operand)
    : tagSize(f) + varintSize(c.operand.length) + c.operand.length;
  return uintSize(1, COMPARE_RESULT[c.result]) + uintSize(2, COMPARE_TARGET[c.target]) + bytesSize(3, c.key) + operand;
}
function opInnerSize(op: RequestOp): number {
  if ('range' in op) return rangeSize(op.range);
  if ('put' in op) return putSize(op.put);
  return deleteRangeSize(op.deleteRange);
}
const opField = (op: RequestOp): number => ('range' in op ? 1 : 'put' in op ? 2 : 3);

// ---- writer ----

class Writer {
  pos = 0;
  constructor(readonly buf: Buffer) {}
  varint(n: number): void {
    const b = this.buf;
    while (n >= 128) { b[this.pos++] = (n % 128) | 128; n = Math.floor(n / 128); }
    b[this.pos++] = n;
  }
  tag(field: number, wireType: 0 | 2): void { this.varint((field << 3) | wireType); }
  bytes(field: number, v: Buffer | undefined): void {
    if (!v || v.length === 0) return;
    this.tag(field, 2); this.varint(v.length);
    this.pos += v.copy(this.buf, this.pos);
  }
  uint(field: number, n: number | undefined): void { if (n) { this.tag(field, 0); this.varint(n); } }
  bool(field: number, v: boolean | undefined): void { if (v) { this.tag(field, 0); this.buf[this.pos++] = 1; } }
  msg(field: number, len: number): void { this.tag(field, 2); this.varint(len); }
}

function writeRange(w: Writer, r: RangeRequest): void {
  w.bytes(1, r.key); w.bytes(2, r.rangeEnd); w.uint(3, r.limit); w.uint(4, r.revision); w.bool(9, r.countOnly);
}
function writePut(w: Writer, p: PutRequest): void { w.bytes(1, p.key); w.bytes(2, p.value); w.bool(4, p.prevKv); }
function writeDeleteRange(w: Writer, d: DeleteRangeRequest): void { w.bytes(1, d.key); w.bytes(2, d.rangeEnd); w.bool(3, d.prevKv); }
function writeCompare(w: Writer, c: Compare): void {
  w.uint(1, COMPARE_RESULT[c.result]); w.uint(2, COMPARE_TARGET[c.target]); w.bytes(3, c.key);
  const f = COMPARE_OPERAND_FIELD[c.target];
  if (typeof c.operand === 'number') { w.tag(f, 0); w.varint(c.operand); } else { w.tag(f, 2); w.varint(c.operand.length); w.pos += c.operand.copy(w.buf, w.pos); }
}
function writeOp(w: Writer, op: RequestOp): void {
  if ('range' in op) writeRange(w, op.range);
  else if ('put' in op) writePut(w, op.put);
  else writeDeleteRange(w, op.deleteRange);
}

/** A gRPC message frame (uncompressed flag + length) with room for len bytes, and a writer positioned after the prefix. */
function frame(len: number): Writer {
  const buf = Buffer.allocUnsafe(5 + len);
  buf[0] = 0;
  buf.writeUInt32BE(len, 1);
  const w = new Writer(buf);
  w.pos = 5;
  return w;
}

function done(w: Writer): Buffer {
  if (w.pos !== w.buf.length) throw new Error(`etcd codec: wrote ${w.pos} of ${w.buf.length} bytes`);
  return w.buf;
}

/** A framed RangeRequest. */
export function encodeRange(r: RangeRequest): Buffer {
  const w = frame(rangeSize(r));
  writeRange(w, r);
  return done(w);
}

/** A framed TxnRequest. */
export function encodeTxn(t: TxnRequest): Buffer {
  const cmpSizes = t.compare.map(compareSize);
  const succSizes = t.success.map(opInnerSize);
  const failSizes = t.failure.map(opInnerSize);
  const opOuter = (op: RequestOp, inner: number) => msgSize(opField(op), inner);
  let len = 0;
  for (const s of cmpSizes) len += msgSize(1, s);
  t.success.forEach((op, i) => { len += msgSize(2, opOuter(op, succSizes[i]!)); });
  t.failure.forEach((op, i) => { len += msgSize(3, opOuter(op, failSizes[i]!)); });
  const w = frame(len);
  t.compare.forEach((c, i) => { w.msg(1, cmpSizes[i]!); writeCompare(w, c); });
  const ops = (field: number, list: RequestOp[], sizes: number[]) => list.forEach((op, i) => {
    w.msg(field, opOuter(op, sizes[i]!));
    w.msg(opField(op), sizes[i]!);
    writeOp(w, op);
  });
  ops(2, t.success, succSizes);
  ops(3, t.failure, failSizes);
  return done(w);
}

/** A framed CompactionRequest. */
export function encodeCompaction(revision: number, physical: boolean): Buffer {
  const w = frame(uintSize(1, revision) + boolSize(2, physical));
  w.uint(1, revision); w.bool(2, physical);
  return done(w);
}

// ---- reader ----

class Reader {
  pos: number;
  constructor(readonly buf: Buffer, start: number, readonly end: number) { this.pos = start; }
  varint(): number {
    const b = this.buf;
    let byte = b[this.pos++]!;
    let n = byte & 127;
    let mul = 128;
    while (byte >= 128) {
      if (this.pos >= this.end) throw new Error('etcd codec: truncated varint');
      byte = b[this.pos++]!;
      n += (byte & 127) * mul;
      mul *= 128;
    }
    return n;
  }
  /** Bounds of a length-delimited field's content; advances past it. */
  len(): [number, number] {
    const l = this.varint();
    const s = this.pos;
    this.pos += l;
    if (this.pos > this.end) throw new Error('etcd codec: truncated message');
    return [s, this.pos];
  }
  skip(wireType: number): void {
    switch (wireType) {
      case 0: this.varint(); return;
      case 1: this.pos += 8; return;
      case 2: this.len(); return;
      case 5: this.pos += 4; return;
      default: throw new Error(`etcd codec: unsupported wire type ${wireType}`);
    }
  }
}

/** Calls field(fieldNumber, wireType, reader) for every field of the message in [start, end). */
function fields(buf: Buffer, start: number, end: number, field: (f: number, wt: number, r: Reader) => void): void {
  const r = new Reader(buf, start, end);
  while (r.pos < end) {
    const t = r.varint();
    const before = r.pos;
    field(t >>> 3, t & 7, r);
    if (r.pos === before) r.skip(t & 7);
  }
}

function readHeaderRevision(buf: Buffer, [s, e]: [number, number]): number {
  let rev = 0;
  fields(buf, s, e, (f, wt, r) => { if (f === 3 && wt === 0) rev = r.varint(); });
  return rev;
}

function readKv(buf: Buffer, [s, e]: [number, number]): KeyValue {
  const kv: KeyValue = { key: EMPTY, value: EMPTY, createRevision: 0, modRevision: 0, version: 0 };
  fields(buf, s, e, (f, wt, r) => {
    if (wt === 2 && (f === 1 || f === 5)) {
      const [a, b] = r.len();
      if (f === 1) kv.key = buf.subarray(a, b); else kv.value = buf.subarray(a, b);
    } else if (wt === 0) {
      if (f === 2) kv.createRevision = r.varint();
      else if (f === 3) kv.modRevision = r.varint();
      else if (f === 4) kv.version = r.varint();
    }
  });
  return kv;
}
const EMPTY = Buffer.alloc(0);

function readRange(buf: Buffer, s: number, e: number): RangeResponse {
  const out: RangeResponse = { revision: 0, kvs: [], more: false, count: 0 };
  fields(buf, s, e, (f, wt, r) => {
    if (f === 1 && wt === 2) out.revision = readHeaderRevision(buf, r.len());
    else if (f === 2 && wt === 2) out.kvs.push(readKv(buf, r.len()));
    else if (f === 3 && wt === 0) out.more = r.varint() !== 0;
    else if (f === 4 && wt === 0) out.count = r.varint();
  });
  return out;
}

function readDeleteRange(buf: Buffer, s: number, e: number): DeleteRangeResponse {
  const out: DeleteRangeResponse = { revision: 0, deleted: 0, prevKvs: [] };
  fields(buf, s, e, (f, wt, r) => {
    if (f === 1 && wt === 2) out.revision = readHeaderRevision(buf, r.len());
    else if (f === 2 && wt === 0) out.deleted = r.varint();
    else if (f === 3 && wt === 2) out.prevKvs.push(readKv(buf, r.len()));
  });
  return out;
}

function readResponseOp(buf: Buffer, s: number, e: number): ResponseOp {
  const out: ResponseOp = {};
  fields(buf, s, e, (f, wt, r) => {
    if (wt !== 2) return;
    const [a, b] = r.len();
    if (f === 1) out.range = readRange(buf, a, b);
    else if (f === 2) out.put = { revision: readPutRevision(buf, a, b) };
    else if (f === 3) out.deleteRange = readDeleteRange(buf, a, b);
  });
  return out;
}

function readPutRevision(buf: Buffer, s: number, e: number): number {
  let rev = 0;
  fields(buf, s, e, (f, wt, r) => { if (f === 1 && wt === 2) rev = readHeaderRevision(buf, r.len()); });
  return rev;
}

/** A RangeResponse message (without the gRPC prefix). */
export function decodeRange(msg: Buffer): RangeResponse { return readRange(msg, 0, msg.length); }

/** A TxnResponse message (without the gRPC prefix). */
export function decodeTxn(msg: Buffer): TxnResponse {
  const out: TxnResponse = { revision: 0, succeeded: false, responses: [] };
  fields(msg, 0, msg.length, (f, wt, r) => {
    if (f === 1 && wt === 2) out.revision = readHeaderRevision(msg, r.len());
    else if (f === 2 && wt === 0) out.succeeded = r.varint() !== 0;
    else if (f === 3 && wt === 2) { const [a, b] = r.len(); out.responses.push(readResponseOp(msg, a, b)); }
  });
  return out;
}

/** The header revision of any response whose field 1 is a ResponseHeader (e.g. CompactionResponse). */
export function decodeHeaderRevision(msg: Buffer): number {
  let rev = 0;
  fields(msg, 0, msg.length, (f, wt, r) => { if (f === 1 && wt === 2) rev = readHeaderRevision(msg, r.len()); });
  return rev;
}

// ---- Watch service ----

export interface WatchCreateRequest {
  key: Buffer;
  rangeEnd?: Buffer;
  startRevision?: number;
  progressNotify?: boolean;
  prevKv?: boolean;
}

export interface WatchEventKv { type: 'Put' | 'Delete'; kv: KeyValue; prevKv?: KeyValue }

export interface WatchResponse {
  revision: number;
  watchId: number;
  created: boolean;
  canceled: boolean;
  compactRevision: number;
  cancelReason: string;
  events: WatchEventKv[];
}

/** A framed WatchRequest carrying a create_request. */
export function encodeWatchCreate(c: WatchCreateRequest): Buffer {
  const inner = bytesSize(1, c.key) + bytesSize(2, c.rangeEnd) + uintSize(3, c.startRevision) + boolSize(4, c.progressNotify) + boolSize(6, c.prevKv);
  const w = frame(msgSize(1, inner));
  w.msg(1, inner);
  w.bytes(1, c.key); w.bytes(2, c.rangeEnd); w.uint(3, c.startRevision); w.bool(4, c.progressNotify); w.bool(6, c.prevKv);
  return done(w);
}

/** A framed WatchRequest carrying a (field-less) progress_request. */
export function encodeWatchProgress(): Buffer {
  const w = frame(msgSize(3, 0));
  w.msg(3, 0);
  return done(w);
}

function readEvent(buf: Buffer, [s, e]: [number, number]): WatchEventKv {
  const ev: WatchEventKv = { type: 'Put', kv: { key: EMPTY, value: EMPTY, createRevision: 0, modRevision: 0, version: 0 } };
  fields(buf, s, e, (f, wt, r) => {
    if (f === 1 && wt === 0) ev.type = r.varint() === 1 ? 'Delete' : 'Put';
    else if (f === 2 && wt === 2) ev.kv = readKv(buf, r.len());
    else if (f === 3 && wt === 2) ev.prevKv = readKv(buf, r.len());
  });
  return ev;
}

/** A WatchResponse message (without the gRPC prefix). */
export function decodeWatchResponse(msg: Buffer): WatchResponse {
  const out: WatchResponse = { revision: 0, watchId: 0, created: false, canceled: false, compactRevision: 0, cancelReason: '', events: [] };
  fields(msg, 0, msg.length, (f, wt, r) => {
    if (wt === 2) {
      if (f === 1) out.revision = readHeaderRevision(msg, r.len());
      else if (f === 6) { const [a, b] = r.len(); out.cancelReason = msg.toString('utf8', a, b); }
      else if (f === 11) out.events.push(readEvent(msg, r.len()));
    } else if (wt === 0) {
      if (f === 2) out.watchId = r.varint();
      else if (f === 3) out.created = r.varint() !== 0;
      else if (f === 4) out.canceled = r.varint() !== 0;
      else if (f === 5) out.compactRevision = r.varint();
    }
  });
  return out;
}
