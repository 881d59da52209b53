import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import protobuf from 'protobufjs';
import { decodeRange, decodeTxn, decodeWatchResponse, encodeCompaction, encodeRange, encodeTxn, encodeWatchRequest } from './etcd-kv-messages.js';

// A second, independent load of etcd's .proto (snake_case names, String longs) checks what the codec writes and reads.
const protoDir = join(dirname(createRequire(import.meta.url).resolve('etcd3/package.json')), 'proto');
const root = new protobuf.Root();
root.resolvePath = (_origin, target) => join(protoDir, target.replace(/^\.\//, ''));
root.loadSync('rpc.proto', { keepCase: true });
const T = (name: string) => root.lookupType(`etcdserverpb.${name}`);
const toObj = (type: string, msg: Uint8Array) => T(type).toObject(T(type).decode(msg), { longs: String, bytes: String, enums: String, defaults: false, oneofs: true });
const unframe = (b: Buffer) => b;
const b64 = (s: string) => Buffer.from(s).toString('base64');

test('encodes a create txn as etcd reads it, mod_revision 0 included', () => {
  const key = Buffer.from('/registry/pods/ns/p');
  const value = Buffer.from('x'.repeat(300));
  const obj = toObj('TxnRequest', unframe(encodeTxn({
    compare: [{ key, target: 'Mod', result: 'Equal', operand: 0 }],
    success: [{ put: { key, value } }],
    failure: [{ range: { key } }],
  })));
  assert.deepEqual(obj, {
    // result Equal (0) is written explicitly by protobufjs: the same message to etcd.
    compare: [{ result: 'Equal', target: 'Mod', key: b64('/registry/pods/ns/p'), mod_revision: '0', target_union: 'mod_revision' }],
    success: [{ request_put: { key: b64('/registry/pods/ns/p'), value: b64('x'.repeat(300)) }, request: 'request_put' }],
    failure: [{ request_range: { key: b64('/registry/pods/ns/p') }, request: 'request_range' }],
  });
});

test('encodes delete and range requests with large revisions and long values', () => {
  const key = Buffer.from('k');
  const big = Buffer.alloc(70_000, 1);                               // a 3-byte length varint
  const txn = toObj('TxnRequest', unframe(encodeTxn({
    compare: [{ key, target: 'Mod', result: 'NotEqual', operand: 2 ** 40 + 3 }, { key, target: 'Value', result: 'Equal', operand: big }],
    success: [{ deleteRange: { key, prevKv: true } }],
    failure: [],
  })));
  assert.equal(txn['compare'][0].mod_revision, String(2 ** 40 + 3));
  assert.equal(txn['compare'][0].result, 'NotEqual');
  assert.equal(Buffer.from(txn['compare'][1].value, 'base64').length, 70_000);
  assert.deepEqual(txn['success'][0].request_delete_range, { key: b64('k'), prev_kv: true });
  const range = toObj('RangeRequest', unframe(encodeRange({ key: Buffer.from('/a/'), rangeEnd: Buffer.from('/a0'), limit: 500, revision: 123456789012, countOnly: true })));
  assert.deepEqual(range, { key: b64('/a/'), range_end: b64('/a0'), limit: '500', revision: '123456789012', count_only: true });
  assert.deepEqual(toObj('RangeRequest', unframe(encodeRange({ key: Buffer.from('/a') }))), { key: b64('/a') });
  assert.deepEqual(toObj('CompactionRequest', unframe(encodeCompaction({ revision: 99, physical: true }))), { revision: '99', physical: true });
});

test('decodes range and txn responses written by protobufjs', () => {
  const kv = (k: string, v: string, rev: number) => ({ key: Buffer.from(k), value: Buffer.from(v), create_revision: rev - 1, mod_revision: rev, version: 2 });
  const header = { cluster_id: '17237436991929493444', member_id: '9372538179322589801', revision: 2 ** 35, raft_term: 7 };
  const rangeMsg = Buffer.from(T('RangeResponse').encode(T('RangeResponse').fromObject({
    header, kvs: [kv('/a/1', '{"a":1}', 10), kv('/a/2', '', 11)], more: true, count: 5,
  })).finish());
  const r = decodeRange(rangeMsg);
  assert.equal(r.revision, 2 ** 35);
  assert.equal(r.more, true);
  assert.equal(r.count, 5);
  assert.deepEqual(r.kvs.map((k) => [k.key.toString(), k.value.toString(), k.createRevision, k.modRevision, k.version]),
    [['/a/1', '{"a":1}', 9, 10, 2], ['/a/2', '', 10, 11, 2]]);

  const txnMsg = Buffer.from(T('TxnResponse').encode(T('TxnResponse').fromObject({
    header, succeeded: false,
    responses: [
      { response_range: { header, kvs: [kv('/b', 'v', 42)], count: 1 } },
      { response_delete_range: { header, deleted: 1, prev_kvs: [kv('/c', 'old', 40)] } },
      { response_put: { header } },
    ],
  })).finish());
  const t = decodeTxn(txnMsg);
  assert.equal(t.succeeded, false);
  assert.equal(t.revision, 2 ** 35);
  assert.equal(t.responses[0]!.range!.kvs[0]!.value.toString(), 'v');
  assert.equal(t.responses[0]!.range!.kvs[0]!.modRevision, 42);
  assert.equal(t.responses[1]!.deleteRange!.deleted, 1);
  assert.equal(t.responses[1]!.deleteRange!.prevKvs[0]!.value.toString(), 'old');
  assert.equal(t.responses[2]!.put!.revision, 2 ** 35);
  const ok = decodeTxn(Buffer.from(T('TxnResponse').encode(T('TxnResponse').fromObject({ header: { revision: 5 }, succeeded: true, responses: [{ response_put: { header: { revision: 5 } } }] })).finish()));
  assert.deepEqual([ok.succeeded, ok.revision], [true, 5]);
});

test('encodes watch create and progress requests and decodes watch responses', () => {
  assert.deepEqual(toObj('WatchRequest', encodeWatchRequest({ create: { key: Buffer.from('/a/'), rangeEnd: Buffer.from('/a0'), startRevision: 2 ** 33, prevKv: true, progressNotify: true } })), {
    create_request: { key: b64('/a/'), range_end: b64('/a0'), start_revision: String(2 ** 33), progress_notify: true, prev_kv: true }, request_union: 'create_request',
  });
  assert.deepEqual(toObj('WatchRequest', encodeWatchRequest({ progress: true })), { progress_request: {}, request_union: 'progress_request' });
  const kv = (k: string, v: string, c: number, m: number) => ({ key: Buffer.from(k), value: Buffer.from(v), create_revision: c, mod_revision: m, version: 1 });
  const msg = T('WatchResponse').encode(T('WatchResponse').fromObject({
    header: { revision: 2 ** 34 }, watch_id: 7, compact_revision: 0,
    events: [{ type: 'Put', kv: kv('/a/x', '{}', 5, 5) }, { type: 'Delete', kv: { key: Buffer.from('/a/y'), mod_revision: 6 }, prev_kv: kv('/a/y', 'old', 3, 4) }],
  })).finish();
  const w = decodeWatchResponse(msg);
  assert.equal(w.revision, 2 ** 34);
  assert.equal(w.watchId, 7);
  assert.deepEqual([w.created, w.canceled, w.compactRevision, w.cancelReason], [false, false, 0, '']);
  assert.deepEqual(w.events.map((e) => [e.type, e.kv.key.toString(), e.kv.modRevision, e.prevKv?.value.toString()]),
    [['Put', '/a/x', 5, undefined], ['Delete', '/a/y', 6, 'old']]);
  // Fields absent from the wire (a Delete event's value and revisions) read as empty and 0.
  assert.deepEqual([w.events[1]!.kv.value, w.events[1]!.kv.createRevision, w.events[1]!.kv.version], [Buffer.alloc(0), 0, 0]);
  const c = decodeWatchResponse(T('WatchResponse').encode(T('WatchResponse').fromObject({ header: { revision: 9 }, canceled: true, compact_revision: 3, cancel_reason: 'gone' })).finish());
  assert.deepEqual([c.canceled, c.compactRevision, c.cancelReason, c.events], [true, 3, 'gone', []]);
});
