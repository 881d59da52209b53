import { test } from 'node:test';
import assert from 'node:assert/strict';
import { goJsonSyntaxError, summarizeBody } from './go-json-error.js';

// Messages as Go's encoding/json reports them (json.Unmarshal of the same bytes).
for (const [input, want] of [
  ['{"a":1}', undefined],
  ['[1, 2.5e3, "x\\n", true, false, null, {}]', undefined],
  ['', 'unexpected end of JSON input'],
  ['{"a":', 'unexpected end of JSON input'],
  ['xyz', `invalid character 'x' looking for beginning of value`],
  ['{a:1}', `invalid character 'a' looking for beginning of object key string`],
  ['{"a" 1}', `invalid character '1' after object key`],
  ['{"a":1 "b":2}', `invalid character '"' after object key:value pair`],
  ['[1 2]', `invalid character '2' after array element`],
  ['{"a":1}}', `invalid character '}' after top-level value`],
  ['{"a":tru}', `invalid character '}' in literal true (expecting 'e')`],
  ['{"a":nul', 'unexpected end of JSON input'],
  ['{"a":-x}', `invalid character 'x' in numeric literal`],
  ['{"a":1.}', `invalid character '}' after decimal point in numeric literal`],
  ['{"a":1e}', `invalid character '}' in exponent of numeric literal`],
  ['{"a":"\\q"}', `invalid character 'q' in string escape code`],
  ['{"a":"\x01"}', `invalid character '\\x01' in string literal`],
  ["{'a':1}", `invalid character '\\'' looking for beginning of object key string`],
] as const) {
  test(`Go's JSON error for ${JSON.stringify(input)}`, () => {
    assert.equal(goJsonSyntaxError(input), want);
  });
}

test('summarizeBody: JSON-looking bodies as text (30 bytes), others as hex', () => {
  assert.equal(summarizeBody(Buffer.alloc(0)), '<empty>');
  assert.equal(summarizeBody(Buffer.from('{"a":1')), '{"a":1');
  assert.equal(summarizeBody(Buffer.from(`{"kind":"Pod","metadata":{"name":"x"}}`)), '{"kind":"Pod","metadata":{"nam ...');
  assert.equal(summarizeBody(Buffer.from('xyz')), '78797a');
});
