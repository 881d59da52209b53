import { format } from 'node:util';

/** Go-ish Sprintf for event messages: %s %d %v %q are filled from args; no args = the text as is. */
export function formatMessage(fmt: string, args: readonly unknown[]): string {
  if (args.length === 0) return fmt;
  let i = 0;
  const out = fmt.replace(/%[sdvq%]/g, (m) => {
    if (m === '%%') return '%';
    if (i >= args.length) return m;
    const a = args[i++];
    if (m === '%q') return JSON.stringify(String(a));
    return typeof a === 'string' ? a : format('%o', a).replace(/^'(.*)'$/, '$1');
  });
  return out;
}
