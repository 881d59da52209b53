/**
 * apimachinery's duration.HumanDuration and the printers' translateTimestampSince: the AGE text
 * kubectl prints verbatim ("5s", "3m20s", "2d3h", "<unknown>").
 */

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** Humanized duration; truncates like Go's integer conversions. */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / SECOND);
  // Upstream tolerates up to 2s of clock skew as "now".
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 60 * 2) return `${seconds}s`;
  const minutes = Math.trunc(ms / MINUTE);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 60 * 3) return `${minutes}m`;
  const hours = Math.trunc(ms / HOUR);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.trunc(hours / 24)}d` : `${Math.trunc(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.trunc(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const dy = Math.trunc(hours / 24) % 365;
    return dy === 0 ? `${Math.trunc(hours / 24 / 365)}y` : `${Math.trunc(hours / 24 / 365)}y${dy}d`;
  }
  return `${Math.trunc(hours / 24 / 365)}y`;
}

/** Age of an RFC 3339 timestamp at `now` (epoch ms); "<unknown>" when unset or unparsable. */
export function translateTimestampSince(ts: string | undefined | null, now: number): string {
  if (!ts) return '<unknown>';
  const t = Date.parse(ts);
  if (Number.isNaN(t)) return '<unknown>';
  return humanDuration(now - t);
}

/**
 * Go's time.ParseDuration for flags: "15s", "1m30s", "300ms", "1h" (or a bare number of seconds,
 * as several upstream flags accept). Returns ms. @throws Error `time: invalid duration "x"`
 */
export function parseGoDuration(s: string): number {
  if (/^\d+(\.\d+)?$/.test(s)) return Number(s) * 1000;
  const units: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/gy;
  let total = 0;
  let pos = 0;
  for (let m = re.exec(s); m; m = re.exec(s)) {
    total += Number(m[1]) * (units[m[2] ?? 's'] ?? 1000);
    pos = re.lastIndex;
  }
  if (pos !== s.length || s.length === 0) throw new Error(`time: invalid duration "${s}"`);
  return total;
}
