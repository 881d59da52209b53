/**
 * `mkctl cluster status`: one line per process of the cluster, from the supervisor's record and
 * the pid files (pure: the caller reads both and says which pids are alive).
 */
import { describeExit, type ProcessStatus } from './supervisor.js';

export interface StatusRow { name: string; alive: boolean; pid?: number; status?: ProcessStatus }

/** "3s", "4m12s", "2h05m": kubectl's short ages, coarser as they grow. */
export function shortDuration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

function stateOf(r: StatusRow, nowMs: number): string {
  const st = r.status;
  if (!st) return r.alive ? 'running (unsupervised)' : 'NOT RUNNING';
  switch (st.state) {
    case 'running': return r.alive ? 'running' : 'NOT RUNNING';
    case 'backoff': return `BACK-OFF (restart in ${shortDuration(Date.parse(st.nextStartAt ?? '') - nowMs)})`;
    case 'stopping': return 'stopping';
    case 'held': return 'held (stopped)';
  }
}

/** The table's lines: NAME STATE PID UPTIME RESTARTS LAST EXIT. */
export function formatStatusTable(rows: StatusRow[], nowMs: number): string[] {
  const cells = [['NAME', 'STATE', 'PID', 'UPTIME', 'RESTARTS', 'LAST EXIT']];
  for (const r of rows) {
    const st = r.status;
    const up = r.alive && st?.state === 'running' && st.startedAt ? shortDuration(nowMs - Date.parse(st.startedAt)) : '-';
    const last = st?.lastExit ? `${describeExit(st.lastExit)}, ${shortDuration(nowMs - Date.parse(st.lastExit.at))} ago (${st.lastExit.at.slice(11, 19)}Z)` : '-';
    cells.push([r.name, stateOf(r, nowMs), r.alive && r.pid ? String(r.pid) : '-', up, st ? String(st.restarts) : '-', last]);
  }
  const widths = cells[0]!.map((_, i) => Math.max(...cells.map((c) => c[i]!.length)));
  return cells.map((c) => c.map((x, i) => (i === c.length - 1 ? x : x.padEnd(widths[i]! + 3))).join('').trimEnd());
}
