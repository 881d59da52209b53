/**
 * EtcdKvClient's unary calls (Channel.createCall, not grpc.Client) against an in-process grpc-js
 * server standing in for etcd's KV service on loopback: the answer rules grpc.Client used to apply
 * (one message with OK, a message that does not decode, an error status), the deadline, close()
 * with a call in flight, and a write retried on the next member only when it never left.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type AddressInfo } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { EtcdCallError, EtcdKvClient } from './etcd-kv-client.js';
import { etcdProto } from './etcd-kv-messages.js';

type Answer = (call: grpc.ServerUnaryCall<Buffer, Buffer>, cb: grpc.sendUnaryData<Buffer>) => void;
const raw = { path: '/etcdserverpb.KV/Txn', requestStream: false, responseStream: false,
  requestSerialize: (b: Buffer) => b, requestDeserialize: (b: Buffer) => b, responseSerialize: (b: Buffer) => b, responseDeserialize: (b: Buffer) => b };

/** A KV service whose Txn answers with `answer` (Range likewise), on a free loopback port. */
async function fakeEtcd(answer: Answer): Promise<{ endpoint: string; calls: () => number; stop(): void }> {
  const server = new grpc.Server();
  let calls = 0;
  const handler = (call: grpc.ServerUnaryCall<Buffer, Buffer>, cb: grpc.sendUnaryData<Buffer>) => { calls++; answer(call, cb); };
  server.addService({ Txn: raw, Range: { ...raw, path: '/etcdserverpb.KV/Range' } }, { Txn: handler, Range: handler });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))));
  return { endpoint: `http://127.0.0.1:${port}`, calls: () => calls, stop: () => server.forceShutdown() };
}

const txnResponse = (revision: number, succeeded: boolean) =>
  Buffer.from(etcdProto.TxnResponse.encode({ header: { revision }, succeeded }).finish());
const createTxn = { compare: [{ key: Buffer.from('/k'), target: 'Mod' as const, result: 'Equal' as const, operand: 0 }], success: [{ put: { key: Buffer.from('/k'), value: Buffer.from('v') } }], failure: [] };

const cleanup: (() => void)[] = [];
after(() => { for (const c of cleanup) c(); });
async function setup(answer: Answer, opts: { requestTimeoutMs?: number } = {}) {
  const etcd = await fakeEtcd(answer);
  const kv = new EtcdKvClient({ endpoints: [etcd.endpoint], ...opts });
  cleanup.push(() => { kv.close(); etcd.stop(); });
  return { etcd, kv };
}
const failsWith = async (p: Promise<unknown>, code: number, details: RegExp) => {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof EtcdCallError, String(err));
    assert.equal(err.code, code, err.message);
    assert.match(err.message, details);
    return true;
  });
};

test('a txn answered with one message resolves with it decoded', async () => {
  const { kv } = await setup((_c, cb) => cb(null, txnResponse(42, true)));
  const res = await kv.txn(createTxn);
  assert.equal(res.revision, 42);
  assert.equal(res.succeeded, true);
});

test('an error status is an EtcdCallError with its code and etcd\'s message', async () => {
  const { kv } = await setup((_c, cb) => cb({ code: grpc.status.INVALID_ARGUMENT, details: 'etcdserver: duplicate key given in txn request' }));
  await failsWith(kv.txn(createTxn), grpc.status.INVALID_ARGUMENT, /^etcd http:\/\/127\.0\.0\.1:\d+\/: etcdserver: duplicate key/);
});

test('a message that does not decode fails the call as INTERNAL', async () => {
  const { kv } = await setup((_c, cb) => cb(null, Buffer.from([0x0a, 0xff, 0xff])));   // a length past the end
  await failsWith(kv.txn(createTxn), grpc.status.INTERNAL, /Response message parsing error/);
});

test('no answer within the deadline fails as DEADLINE_EXCEEDED', async () => {
  const { kv } = await setup(() => { /* never answers */ }, { requestTimeoutMs: 300 });
  await failsWith(kv.txn(createTxn), grpc.status.DEADLINE_EXCEEDED, /Deadline exceeded/i);
});

test('close() fails a call in flight as CANCELLED and later calls at once', async () => {
  let arrived!: () => void;
  const seen = new Promise<void>((r) => { arrived = r; });
  const { kv } = await setup(() => { arrived(); });
  const pending = kv.txn(createTxn);
  await seen;
  kv.close();
  await failsWith(pending, grpc.status.CANCELLED, /etcd client closed/);
  await failsWith(kv.txn(createTxn), grpc.status.CANCELLED, /etcd client closed/);
});

test('a write that never reached a member (connection refused) goes to the next; one that reached it does not', async () => {
  const dead = await new Promise<number>((resolve) => { const s = createServer(); s.listen(0, '127.0.0.1', () => { const { port } = s.address() as AddressInfo; s.close(() => resolve(port)); }); });
  const live = await fakeEtcd((c, cb) => cb(null, c.getPath().endsWith('/Range')
    ? Buffer.from(etcdProto.RangeResponse.encode({ header: { revision: 7 } }).finish()) : txnResponse(7, true)));
  const kv = new EtcdKvClient({ endpoints: [`http://127.0.0.1:${dead}`, live.endpoint] });
  cleanup.push(() => { kv.close(); live.stop(); });
  const res = await kv.txn(createTxn);                                 // round-robin starts at the dead member
  assert.equal(res.revision, 7);
  assert.equal(live.calls(), 1);

  const failing = await fakeEtcd((_c, cb) => cb({ code: grpc.status.UNAVAILABLE, details: 'etcdserver: leader changed' }));
  const kv2 = new EtcdKvClient({ endpoints: [failing.endpoint, live.endpoint] });
  cleanup.push(() => { kv2.close(); failing.stop(); });
  await failsWith(kv2.txn(createTxn), grpc.status.UNAVAILABLE, /leader changed/);   // may have been applied: not repeated
  assert.equal(live.calls(), 1);
  const kv3 = new EtcdKvClient({ endpoints: [failing.endpoint, live.endpoint] });
  cleanup.push(() => kv3.close());
  assert.equal((await kv3.range({ key: Buffer.from('/k') })).revision, 7);          // a read is retried on the next member
  assert.equal(failing.calls(), 2);
  assert.equal(live.calls(), 2);
});
