import { test } from 'node:test';
import assert from 'node:assert/strict';
import { queryBool } from './query.js';

// Upstream: apimachinery runtime Convert_Slice_string_To_bool.
const cases: { name: string; value: Parameters<typeof queryBool>[0]; absent?: boolean; want: boolean }[] = [
  { name: 'absent is false', value: undefined, want: false },
  { name: 'absent (URLSearchParams null) is false', value: null, want: false },
  { name: 'absent takes the caller default', value: undefined, absent: true, want: true },
  { name: 'true', value: 'true', want: true },
  { name: 'True (the Python client)', value: 'True', want: true },
  { name: 'TRUE', value: 'TRUE', want: true },
  { name: '1', value: '1', want: true },
  { name: 't', value: 't', want: true },
  { name: 'an empty value (?watch) is true', value: '', want: true },
  { name: 'any other word is true', value: 'yes', want: true },
  { name: 'false', value: 'false', want: false },
  { name: 'False (the Python client)', value: 'False', want: false },
  { name: 'FALSE', value: 'FALSE', want: false },
  { name: 'fAlSe', value: 'fAlSe', want: false },
  { name: '0', value: '0', want: false },
  { name: 'false wins over a default of true', value: 'false', absent: true, want: false },
  { name: 'a repeated parameter reads its first value', value: ['False', 'true'], want: false },
  { name: 'a repeated parameter reads its first value (true)', value: ['1', '0'], want: true },
];

for (const tc of cases) {
  test(`queryBool: ${tc.name}`, () => {
    assert.equal(queryBool(tc.value, tc.absent), tc.want);
  });
}
