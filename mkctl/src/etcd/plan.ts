/** The pure parts of `mkctl etcd`: etcdctl's JSON, the restore plan, the revision to reach, the status table. */
import { join } from 'node:path';
import type { EtcdMember } from '../cluster/network-plan.js';

/**
 * JSON.parse for etcd's output: member and cluster IDs are uint64s beyond JavaScript's exact
 * integers, so every integer of 16 digits or more is kept as a string.
 */
export function parseEtcdJson<T>(text: string): T {
  return JSON.parse(text.replace(/([:[,]\s*)(\d{16,})(?=\s*[,}\]])/g, '$1"$2"')) as T;
}

/** One entry of `etcdctl endpoint status -w json`. */
export interface EndpointStatus {
  Endpoint: string;
  Status: { header: { member_id: string | number; revision: number | string; raft_term: number }; version: string; dbSize: number; dbSizeInUse?: number; leader: string | number; raftIndex: number; raftTerm: number };
}
export interface MemberInfo { ID: string | number; name: string; peerURLs: string[]; clientURLs: string[] }

export interface RestoreStep { member: string; peerUrl: string; token: string; dataDir: string; newDir: string; asideDir: string }

/** Every member gets a new data dir from the snapshot; the old one is moved aside, never deleted. */
export function planRestore(o: { members: readonly EtcdMember[]; etcdDir: string; file: string; stamp: string; token: string }): RestoreStep[] {
  return o.members.map((m) => ({
    member: m.name, peerUrl: `https://127.0.0.1:${m.peerPort}`, token: o.token,
    dataDir: join(o.etcdDir, m.name), newDir: join(o.etcdDir, `${m.name}.restored-${o.stamp}`), asideDir: join(o.etcdDir, `${m.name}.before-restore-${o.stamp}`),
  }));
}

/**
 * The revision a restored cluster must reach before it serves: past every revision the cluster had
 * handed out (current), so new resourceVersions are larger than any a client holds. A snapshot
 * newer than current (a restore into another cluster) needs one write.
 */
export function revisionBump(snapshotRevision: number, currentRevision: number): number {
  return Math.max(snapshotRevision, currentRevision) + 1;
}

/**
 * Why a spawnSync of etcdctl failed, in one line: its own message, else why it did not run
 * (etcdctl not installed, a timeout), else its exit status. Pure.
 */
export function spawnFailure(r: { status: number | null; signal?: NodeJS.Signals | string | null; stdout?: string | null; stderr?: string | null; error?: Error | undefined }): string {
  const said = (r.stderr || r.stdout || '').trim();
  if (said) return said;
  const code = (r.error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT') return 'etcdctl is not installed (apt-get install etcd-client)';
  if (code === 'ETIMEDOUT') return 'timed out';
  if (r.error) return r.error.message;
  return r.signal ? `killed by ${r.signal}` : `exit status ${r.status}`;
}

export function formatSize(bytes: number | undefined): string {
  if (bytes === undefined) return '?';
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 ** 2) return `${(bytes / 1024).toFixed(0)} kB`;
  return `${(bytes / 1024 ** 2).toFixed(1)} MB`;
}

/** `mkctl etcd status`: NAME ENDPOINT VERSION DB SIZE IN USE LEADER RAFT TERM RAFT INDEX REVISION, unreachable members marked. */
export function statusRows(members: { name: string; endpoint: string }[], statuses: EndpointStatus[]): string[] {
  const cells = [['NAME', 'ENDPOINT', 'VERSION', 'DB SIZE', 'IN USE', 'LEADER', 'RAFT TERM', 'RAFT INDEX', 'REVISION']];
  for (const m of members) {
    const s = statuses.find((x) => x.Endpoint === m.endpoint)?.Status;
    if (!s) { cells.push([m.name, m.endpoint, 'UNREACHABLE', '-', '-', '-', '-', '-', '-']); continue; }
    cells.push([m.name, m.endpoint, s.version, formatSize(s.dbSize), formatSize(s.dbSizeInUse), String(s.leader) === String(s.header.member_id) ? 'true' : 'false',
      String(s.raftTerm), String(s.raftIndex), String(s.header.revision)]);
  }
  const widths = cells[0]!.map((_, i) => Math.max(...cells.map((c) => c[i]!.length)));
  return cells.map((c) => c.map((x, i) => (i === c.length - 1 ? x : x.padEnd(widths[i]! + 3))).join('').trimEnd());
}
