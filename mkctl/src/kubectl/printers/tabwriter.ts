/**
 * Go's text/tabwriter (the elastic-tabstop algorithm kubectl prints every table and every
 * `describe` through). Cells end at '\t'; the text after a line's last tab is not aligned.
 * A column block is a run of consecutive lines that have a terminated cell in that column;
 * its width is max(minwidth, widest cell + padding). Mirrors text/tabwriter's format().
 */
export interface TabWriterOptions { minwidth: number; padding: number }

/** kubectl's printers.GetNewTabWriter: minwidth 6, tabwidth 4, padding 3, ' '. */
export const TABLE_TABWRITER: TabWriterOptions = { minwidth: 6, padding: 3 };
/** kubectl describe's tabwriter: minwidth 0, tabwidth 8, padding 2, ' '. */
export const DESCRIBE_TABWRITER: TabWriterOptions = { minwidth: 0, padding: 2 };

const width = (s: string) => [...s].length;

/** Formats text (lines with tab-terminated cells) into aligned text. */
export function tabwrite(text: string, o: TabWriterOptions = TABLE_TABWRITER): string {
  const endsWithNewline = text.endsWith('\n');
  const raw = (endsWithNewline ? text.slice(0, -1) : text).split('\n');
  const lines = raw.map((l) => l.split('\t'));
  const out: string[] = [];
  const widths: number[] = [];
  const writeLines = (from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const cells = lines[i]!;
      let s = '';
      cells.forEach((c, j) => {
        s += c;
        if (j < cells.length - 1 && j < widths.length) s += ' '.repeat(Math.max(0, widths[j]! - width(c)));
      });
      out.push(s);
    }
  };
  const format = (line0: number, line1: number): void => {
    const column = widths.length;
    let start = line0;
    for (let cur = line0; cur < line1; cur++) {
      if (column >= lines[cur]!.length - 1) continue;
      writeLines(start, cur);
      start = cur;
      let w = o.minwidth;
      for (; cur < line1; cur++) {
        const l = lines[cur]!;
        if (column >= l.length - 1) break;
        w = Math.max(w, width(l[column]!) + o.padding);
      }
      widths.push(w);
      format(start, cur);
      widths.pop();
      start = cur;
      cur--; // the outer loop's increment re-examines line `cur`
    }
    writeLines(start, line1);
  };
  format(0, lines.length);
  return out.join('\n') + (endsWithNewline ? '\n' : '');
}
