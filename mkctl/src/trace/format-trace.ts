/** `mkctl trace`'s terminal rendering of a chain (the chain itself comes from @mk8s/api/trace). */
import type { Link, LinkStatus } from '@mk8s/api/trace';

const pad2 = (n: number) => String(n).padStart(2, '0');
function clock(t: string | undefined): string {
  if (!t) return '--:--:--';
  const d = new Date(t);
  return Number.isNaN(d.getTime()) ? '--:--:--' : `${pad2(d.getHours())}:${pad2(d.getMinutes())}:${pad2(d.getSeconds())}`;
}

const MARK: Record<LinkStatus, string> = { ok: '✓', broken: '✗', waiting: '…', info: '·' };

/** One line per link; a broken or waiting link adds who owns it and where to look. */
export function formatTrace(links: Link[]): string {
  const w = Math.max(...links.map((l) => l.step.length));
  const out: string[] = [];
  for (const l of links) {
    out.push(`${MARK[l.status]} ${clock(l.time)}  ${l.step.padEnd(w)}  ${l.evidence}`);
    if (l.status === 'broken' || l.status === 'waiting') {
      if (l.owner) out.push(`  ${' '.repeat(8)}  ${' '.repeat(w)}  owner: ${l.owner}`);
      if (l.hint) out.push(`  ${' '.repeat(8)}  ${' '.repeat(w)}  look at: ${l.hint}`);
    }
  }
  return `${out.join('\n')}\n`;
}
