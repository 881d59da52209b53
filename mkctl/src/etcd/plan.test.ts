import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ETCD_MEMBERS } from '../cluster/network-plan.js';
import { parseEtcdJson, planRestore, revisionBump, spawnFailure, statusRows, type EndpointStatus } from './plan.js';

test('parseEtcdJson keeps uint64 ids exact and small numbers numeric', () => {
  const v = parseEtcdJson<{ header: { member_id: string; revision: number }; members: { ID: string }[] }>(
    '{"header":{"cluster_id":15875391935852295136,"member_id":7383792418829112008,"revision":2,"raft_term":2},"members":[{"ID":7383792418829112008,"name":"p1"}]}');
  assert.equal(v.header.member_id, '7383792418829112008');
  assert.equal(v.header.revision, 2);
  assert.equal(v.members[0]!.ID, '7383792418829112008');
  assert.deepEqual(parseEtcdJson('[12345678901234567890, 1]'), ['12345678901234567890', 1]);
});

for (const tc of [
  { name: 'an older snapshot continues past the current revision', snap: 100, current: 250, want: 251 },
  { name: 'a snapshot of the current moment still moves one on', snap: 250, current: 250, want: 251 },
  { name: 'a snapshot newer than the cluster moves past itself', snap: 900, current: 250, want: 901 },
]) test(`revisionBump: ${tc.name}`, () => assert.equal(revisionBump(tc.snap, tc.current), tc.want));

test('planRestore gives every member a new data dir and keeps the old one aside', () => {
  const plan = planRestore({ members: ETCD_MEMBERS, etcdDir: '/s/etcd', file: '/tmp/snap.db', stamp: '20261202T040000', token: 'mk8s-local' });
  assert.deepEqual(plan.map((s) => [s.member, s.peerUrl, s.dataDir, s.newDir, s.asideDir]), [
    ['etcd-1', 'https://127.0.0.1:2380', '/s/etcd/etcd-1', '/s/etcd/etcd-1.restored-20261202T040000', '/s/etcd/etcd-1.before-restore-20261202T040000'],
    ['etcd-2', 'https://127.0.0.1:22380', '/s/etcd/etcd-2', '/s/etcd/etcd-2.restored-20261202T040000', '/s/etcd/etcd-2.before-restore-20261202T040000'],
    ['etcd-3', 'https://127.0.0.1:32380', '/s/etcd/etcd-3', '/s/etcd/etcd-3.restored-20261202T040000', '/s/etcd/etcd-3.before-restore-20261202T040000'],
  ]);
  assert.ok(plan.every((s) => s.token === 'mk8s-local'));
});

test('statusRows marks the leader and unreachable members', () => {
  const st = (endpoint: string, id: string, leader: string, rev: number): EndpointStatus => ({
    Endpoint: endpoint, Status: { header: { member_id: id, revision: rev, raft_term: 3 }, version: '3.4.23', dbSize: 2 * 1024 * 1024, dbSizeInUse: 1024 * 1024, leader, raftIndex: 77, raftTerm: 3 },
  });
  const rows = statusRows(
    [{ name: 'etcd-1', endpoint: 'https://127.0.0.1:2379' }, { name: 'etcd-2', endpoint: 'https://127.0.0.1:22379' }, { name: 'etcd-3', endpoint: 'https://127.0.0.1:32379' }],
    [st('https://127.0.0.1:2379', '11', '22', 500), st('https://127.0.0.1:22379', '22', '22', 500)]);
  assert.equal(rows.length, 4);
  assert.match(rows[0]!, /^NAME\s+ENDPOINT\s+VERSION\s+DB SIZE\s+IN USE\s+LEADER\s+RAFT TERM\s+RAFT INDEX\s+REVISION$/);
  assert.match(rows[1]!, /^etcd-1\s+https:\/\/127\.0\.0\.1:2379\s+3\.4\.23\s+2\.0 MB\s+1\.0 MB\s+false\s+3\s+77\s+500$/);
  assert.match(rows[2]!, /^etcd-2\s+\S+\s+3\.4\.23\s+2\.0 MB\s+1\.0 MB\s+true\s/);
  assert.match(rows[3]!, /^etcd-3\s+https:\/\/127\.0\.0\.1:32379\s+UNREACHABLE(\s+-){6}$/);
});

for (const tc of [
  { name: 'etcdctl\'s own message', r: { status: 1, stdout: '', stderr: 'Error: file size too small\n' }, want: 'Error: file size too small' },
  { name: 'etcdctl not installed', r: { status: null, stdout: null, stderr: null, error: Object.assign(new Error('spawnSync etcdctl ENOENT'), { code: 'ENOENT' }) }, want: 'etcdctl is not installed (apt-get install etcd-client)' },
  { name: 'a timeout', r: { status: null, signal: 'SIGTERM', stdout: '', stderr: '', error: Object.assign(new Error('spawnSync etcdctl ETIMEDOUT'), { code: 'ETIMEDOUT' }) }, want: 'timed out' },
  { name: 'silent failure', r: { status: 2, stdout: '', stderr: '' }, want: 'exit status 2' },
]) test(`spawnFailure: ${tc.name}`, () => assert.equal(spawnFailure(tc.r), tc.want));
