import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FrameDecoder } from './frames.js';

const frame = (type: number, s: string) => {
  const h = Buffer.alloc(8);
  h[0] = type;
  h.writeUInt32BE(Buffer.byteLength(s), 4);
  return Buffer.concat([h, Buffer.from(s)]);
};

test('decodes frames split at any byte', () => {
  const all = Buffer.concat([frame(1, 'hello\n'), frame(2, 'oops\n'), frame(1, '')]);
  for (let cut = 0; cut <= all.length; cut++) {
    const d = new FrameDecoder();
    const got = [...d.push(all.subarray(0, cut)), ...d.push(all.subarray(cut))];
    assert.deepEqual(got.map((f) => `${f.stream}:${f.data.toString()}`), ['stdout:hello\n', 'stderr:oops\n']);
    assert.equal(d.pending, 0);
  }
});
