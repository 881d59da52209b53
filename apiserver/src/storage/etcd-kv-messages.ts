/**
 * The etcdserverpb messages the apiserver's storage sends and reads, encoded and decoded by
 * protobufjs from etcd's own .proto files (rpc.proto, kv.proto as shipped with the etcd3 package),
 * behind plain TypeScript shapes. Revisions are plain numbers: etcd's int64 revisions stay far
 * below 2^53, and converting once here spares every caller a Long.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import protobuf from 'protobufjs';

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

export interface CompactionRequest { revision: number; physical: boolean }

export interface WatchCreateRequest {
  key: Buffer;
  rangeEnd?: Buffer;
  startRevision?: number;
  progressNotify?: boolean;
  prevKv?: boolean;
}

/** A WatchRequest: a create_request or a (field-less) progress_request. */
export type WatchRequest = { create: WatchCreateRequest } | { progress: true };

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

// etcd's .proto files ship with the etcd3 package (a dependency for the compactor anyway).
const PROTO_DIR = join(dirname(createRequire(import.meta.url).resolve('etcd3/package.json')), 'proto');

/** etcd's message types, loaded once (camelCase field names, protobufjs' default). */
export const etcdProto = (() => {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => join(PROTO_DIR, target.replace(/^\.\//, ''));
  root.loadSync('rpc.proto');
  const t = (name: string) => root.lookupType(name);
  return {
    RangeRequest: t('etcdserverpb.RangeRequest'), RangeResponse: t('etcdserverpb.RangeResponse'),
    TxnRequest: t('etcdserverpb.TxnRequest'), TxnResponse: t('etcdserverpb.TxnResponse'),
    CompactionRequest: t('etcdserverpb.CompactionRequest'), CompactionResponse: t('etcdserverpb.CompactionResponse'),
    WatchRequest: t('etcdserverpb.WatchRequest'), WatchResponse: t('etcdserverpb.WatchResponse'),
  };
})();

// Compare.CompareTarget / CompareResult enum values and the target_union member per target.
const COMPARE_TARGET = { Version: 0, Create: 1, Mod: 2, Value: 3 } as const;
const COMPARE_RESULT = { Equal: 0, Greater: 1, Less: 2, NotEqual: 3 } as const;
const COMPARE_OPERAND = { Version: 'version', Create: 'createRevision', Mod: 'modRevision', Value: 'value' } as const;

/** protobufjs yields numbers for int64 without the `long` package, Long objects with it. */
type Int64 = number | { toNumber(): number };
const EMPTY = Buffer.alloc(0);
const num = (v: Int64 | null | undefined): number => (v == null ? 0 : typeof v === 'number' ? v : v.toNumber());

function toBuffer(u: Uint8Array): Buffer {
  return Buffer.isBuffer(u) ? u : Buffer.from(u.buffer, u.byteOffset, u.byteLength);
}
// A bytes field absent from the wire reads as protobufjs' default, an empty plain array (e.g. a
// Delete event's value); present ones are Buffer views into the response.
const bytes = (u: Uint8Array | null | undefined): Buffer => (Buffer.isBuffer(u) ? u : u instanceof Uint8Array ? toBuffer(u) : EMPTY);

// ---- requests (our shapes use the .proto's camelCase names; only Compare and the oneofs are mapped) ----

export function encodeRange(r: RangeRequest): Buffer {
  return toBuffer(etcdProto.RangeRequest.encode(r).finish());
}

function requestOp(op: RequestOp): object {
  if ('range' in op) return { requestRange: op.range };
  if ('put' in op) return { requestPut: op.put };
  return { requestDeleteRange: op.deleteRange };
}

export function encodeTxn(t: TxnRequest): Buffer {
  return toBuffer(etcdProto.TxnRequest.encode({
    // A oneof member is written even when zero: etcd tells "mod_revision = 0" (absent) from unset.
    compare: t.compare.map((c) => ({ result: COMPARE_RESULT[c.result], target: COMPARE_TARGET[c.target], key: c.key, [COMPARE_OPERAND[c.target]]: c.operand })),
    success: t.success.map(requestOp),
    failure: t.failure.map(requestOp),
  }).finish());
}

export function encodeCompaction(c: CompactionRequest): Buffer {
  return toBuffer(etcdProto.CompactionRequest.encode(c).finish());
}

export function encodeWatchRequest(r: WatchRequest): Buffer {
  return toBuffer(etcdProto.WatchRequest.encode('create' in r ? { createRequest: r.create } : { progressRequest: {} }).finish());
}

// ---- responses ----

interface PbHeader { revision?: Int64 }
interface PbKv { key?: Uint8Array | null; value?: Uint8Array | null; createRevision: Int64; modRevision: Int64; version: Int64 }
interface PbRange { header?: PbHeader | null; kvs: PbKv[]; more: boolean; count: Int64 }
interface PbDeleteRange { header?: PbHeader | null; deleted: Int64; prevKvs: PbKv[] }
interface PbResponseOp { responseRange?: PbRange | null; responsePut?: { header?: PbHeader | null } | null; responseDeleteRange?: PbDeleteRange | null }
interface PbTxn { header?: PbHeader | null; succeeded: boolean; responses: PbResponseOp[] }
interface PbEvent { type: number; kv?: PbKv | null; prevKv?: PbKv | null }
interface PbWatch { header?: PbHeader | null; watchId: Int64; created: boolean; canceled: boolean; compactRevision: Int64; cancelReason?: string | null; events: PbEvent[] }

const revisionOf = (h: PbHeader | null | undefined): number => num(h?.revision);

function kv(k: PbKv | null | undefined): KeyValue {
  if (!k) return { key: EMPTY, value: EMPTY, createRevision: 0, modRevision: 0, version: 0 };
  return { key: bytes(k.key), value: bytes(k.value), createRevision: num(k.createRevision), modRevision: num(k.modRevision), version: num(k.version) };
}

function range(m: PbRange): RangeResponse {
  return { revision: revisionOf(m.header), kvs: m.kvs.map(kv), more: m.more === true, count: num(m.count) };
}

/** A RangeResponse message (without the gRPC prefix). */
export function decodeRange(msg: Uint8Array): RangeResponse {
  return range(etcdProto.RangeResponse.decode(msg) as unknown as PbRange);
}

/** A TxnResponse message (without the gRPC prefix). */
export function decodeTxn(msg: Uint8Array): TxnResponse {
  const m = etcdProto.TxnResponse.decode(msg) as unknown as PbTxn;
  return {
    revision: revisionOf(m.header),
    succeeded: m.succeeded === true,
    responses: m.responses.map((r) => {
      const out: ResponseOp = {};
      if (r.responseRange) out.range = range(r.responseRange);
      if (r.responsePut) out.put = { revision: revisionOf(r.responsePut.header) };
      if (r.responseDeleteRange) {
        const d = r.responseDeleteRange;
        out.deleteRange = { revision: revisionOf(d.header), deleted: num(d.deleted), prevKvs: d.prevKvs.map(kv) };
      }
      return out;
    }),
  };
}

/** A CompactionResponse's header revision. */
export function decodeCompaction(msg: Uint8Array): number {
  return revisionOf((etcdProto.CompactionResponse.decode(msg) as unknown as { header?: PbHeader | null }).header);
}

/** A WatchResponse message (without the gRPC prefix). */
export function decodeWatchResponse(msg: Uint8Array): WatchResponse {
  const m = etcdProto.WatchResponse.decode(msg) as unknown as PbWatch;
  return {
    revision: revisionOf(m.header),
    watchId: num(m.watchId),
    created: m.created === true,
    canceled: m.canceled === true,
    compactRevision: num(m.compactRevision),
    cancelReason: m.cancelReason ?? '',
    events: m.events.map((e) => {
      const ev: WatchEventKv = { type: e.type === 1 ? 'Delete' : 'Put', kv: kv(e.kv) };
      if (e.prevKv) ev.prevKv = kv(e.prevKv);
      return ev;
    }),
  };
}
