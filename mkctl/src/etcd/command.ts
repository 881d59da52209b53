import type { Command } from 'commander';
import { nonNegativeNumber } from '../flags.js';
import { etcdCompact, etcdDefrag, etcdStatus, snapshotRestore, snapshotSave } from './etcd-admin.js';

const out = (l: string) => console.log(l);

/** `mkctl etcd snapshot save|restore FILE`, `mkctl etcd status|defrag|compact` (the local cluster's etcd). */
export function registerEtcdCommands(program: Command): void {
  const etcd = program.command('etcd').description("the local cluster's etcd: snapshots, status, defragmentation, compaction");
  const snapshot = etcd.command('snapshot').description('save or restore a snapshot of the whole keyspace');
  snapshot.command('save <file>').description('save a snapshot (from the leader) to FILE')
    .action((file: string) => { snapshotSave(file, out); });
  snapshot.command('restore <file>').description('restore every member from FILE (new data dirs, old ones kept aside); resourceVersions continue')
    .option('--min-revision <n>', 'the revision to continue past (default: the running cluster\'s current one)')
    .option('--timeout <seconds>', 'how long to wait for each step', '120')
    .action(async (file: string, o: { minRevision?: string; timeout: string }) => {
      await snapshotRestore({ file, out, timeoutMs: nonNegativeNumber('--timeout', o.timeout) * 1000, ...(o.minRevision !== undefined ? { minRevision: nonNegativeNumber('--min-revision', o.minRevision, { integer: true }) } : {}) });
    });
  etcd.command('status').description('each member: version, DB size, leader, raft term and index, revision')
    .action(() => { if (!etcdStatus(out)) process.exitCode = 1; });
  etcd.command('defrag').description('defragment every member, one at a time')
    .action(() => { etcdDefrag(out); });
  etcd.command('compact [revision]').description('compact the keyspace at REVISION (default: the current revision)')
    .option('--physical', 'wait until the compaction is physically applied')
    .action((revision: string | undefined, o: { physical?: boolean }) => { etcdCompact(out, { ...(revision !== undefined ? { revision: nonNegativeNumber('revision', revision, { integer: true }) } : {}), ...(o.physical ? { physical: true } : {}) }); });
}
