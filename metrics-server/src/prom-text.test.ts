import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parsePromText, PromParseError, type PromSample } from './prom-text.js';

const parse = (t: string) => { const out: PromSample[] = []; parsePromText(t, (s) => out.push(s)); return out; };

for (const tc of [
  { name: 'bare sample', text: 'up 1\n', want: [{ name: 'up', labels: {}, value: 1 }] },
  { name: 'labels and timestamp', text: 'container_cpu_usage_seconds_total{container="c",namespace="ns",pod="p"} 12.5 1700000000123\n',
    want: [{ name: 'container_cpu_usage_seconds_total', labels: { container: 'c', namespace: 'ns', pod: 'p' }, value: 12.5, timestampMs: 1700000000123 }] },
  { name: 'comments and blank lines skipped', text: '# HELP x y\n# TYPE x gauge\n\n  \nx 2\n', want: [{ name: 'x', labels: {}, value: 2 }] },
  { name: 'escapes in label values', text: 'x{a="q\\"uote",b="back\\\\slash",c="new\\nline"} 1', want: [{ name: 'x', labels: { a: 'q"uote', b: 'back\\slash', c: 'new\nline' }, value: 1 }] },
  { name: 'exponent values', text: 'x 1.2e+07\n', want: [{ name: 'x', labels: {}, value: 12_000_000 }] },
  { name: 'Inf and NaN', text: 'a +Inf\nb -Inf\n', want: [{ name: 'a', labels: {}, value: Infinity }, { name: 'b', labels: {}, value: -Infinity }] },
  { name: 'trailing comma in labels', text: 'x{a="1",} 3', want: [{ name: 'x', labels: { a: '1' }, value: 3 }] },
  { name: 'CRLF lines', text: 'x 1\r\ny 2\r\n', want: [{ name: 'x', labels: {}, value: 1 }, { name: 'y', labels: {}, value: 2 }] },
]) test(`parsePromText: ${tc.name}`, () => assert.deepEqual(parse(tc.text), tc.want));

for (const tc of [
  { name: 'missing value', text: 'x\n', line: 1 },
  { name: 'bad value', text: 'ok 1\nx abc\n', line: 2 },
  { name: 'unterminated label value', text: 'x{a="b} 1', line: 1 },
  { name: 'bad metric name', text: '1x 2', line: 1 },
  { name: 'bad timestamp', text: 'x 1 1.5', line: 1 },
]) test(`parsePromText rejects ${tc.name}`, () => {
  assert.throws(() => parse(tc.text), (e: unknown) => e instanceof PromParseError && e.line === tc.line);
});

test('parsePromText: NaN value parses', () => assert.ok(Number.isNaN(parse('x NaN')[0]!.value)));
