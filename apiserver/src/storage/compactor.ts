/**
 * The apiserver's etcd compactor (storage/etcd3/compact.go): every interval it compacts etcd to the
 * revision it saw one interval earlier, so about one interval of history stays available for
 * watches and continue tokens. Several apiservers coordinate through a shared `compact_rev_key`:
 * only the one whose compare-and-swap on the key's version wins compacts in a round.
 */
import type { Etcd3 } from 'etcd3';
import { realClock, silentLogger, type Clock, type Logger } from '@mk8s/component-base';

export const COMPACT_REV_KEY = 'compact_rev_key';

export interface CompactorOptions {
  client: Etcd3;
  /** @default 300000 (upstream's 5 minutes) */
  intervalMs?: number;
  clock?: Clock;
  logger?: Logger;
  signal: AbortSignal;
}

/** Runs until the signal aborts. Errors are logged and retried next interval. */
export function startCompactor(opts: CompactorOptions): void {
  const clock = opts.clock ?? realClock;
  const log = opts.logger ?? silentLogger();
  const interval = opts.intervalMs ?? 300_000;
  const key = Buffer.from(COMPACT_REV_KEY);
  let lastVersion = 0;            // version of compact_rev_key we last saw
  let pendingRev = 0;             // revision recorded one interval ago, compacted this round
  const round = async () => {
    const res = await opts.client.kv.txn({
      compare: [{ key, target: 'Version', result: 'Equal', version: lastVersion }],
      success: [{ request_put: { key, value: Buffer.from(String(Date.now())), prev_kv: true } }],
      failure: [{ request_range: { key } }],
    });
    const curRev = Number(res.header.revision);
    if (!res.succeeded) {
      // Another apiserver compacted this round; follow its key version (as upstream).
      lastVersion = Number(res.responses[0]?.response_range?.kvs[0]?.version ?? 0);
    } else {
      lastVersion++;
      if (pendingRev > 0) {                                            // never on the first round
        try {
          await opts.client.kv.compact({ revision: pendingRev });
          log.info({ revision: pendingRev }, 'Compacted etcd');
        } catch (err) {
          if (!(err instanceof Error && err.message.includes('required revision has been compacted'))) throw err;
        }
      }
    }
    pendingRev = curRev;
  };
  let cancel: (() => void) | undefined;
  opts.signal.addEventListener('abort', () => cancel?.(), { once: true });
  const schedule = () => {
    if (opts.signal.aborted) return;
    cancel = clock.setTimeout(() => {
      round().catch((err: unknown) => log.warn({ err }, 'Could not compact etcd')).finally(schedule);
    }, interval);
  };
  schedule();
}
