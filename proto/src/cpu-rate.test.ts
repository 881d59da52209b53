import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CpuRateCache } from './cpu-rate.js';

const S = 1e9;                                                   // ns in a second
const at = (sec: number, usageSec: number) => ({ timestampNs: sec * S, usageCoreNanoSeconds: usageSec * S });

test('CpuRateCache: nanocores between cumulative samples', async (t) => {
  const cases: { name: string; samples: [number, number][]; want: (number | undefined)[] }[] = [
    { name: 'first sample has no rate', samples: [[0, 0]], want: [undefined] },
    { name: 'one core over 15 s', samples: [[0, 0], [15, 15]], want: [undefined, 1e9] },
    { name: 'half a core, then idle', samples: [[0, 10], [15, 17.5], [30, 17.5]], want: [undefined, 5e8, 0] },
    // A second reader 10 ms after a scrape measures against the older sample, not over 10 ms.
    { name: 'a read 10 ms later keeps the full window', samples: [[0, 0], [15, 15], [15.01, 15.01]], want: [undefined, 1e9, 1e9] },
    { name: 'reads closer than the window measure against the oldest kept', samples: [[0, 0], [0.5, 0.25]], want: [undefined, 5e8] },
    { name: 'a counter going backwards starts over', samples: [[0, 100], [15, 3]], want: [undefined, undefined] },
    { name: 'a sample not newer than the last is not a rate', samples: [[15, 15], [15, 15]], want: [undefined, undefined] },
    { name: 'two cores over 60 s', samples: [[0, 0], [60, 120]], want: [undefined, 2e9] },
  ];
  for (const tc of cases) {
    await t.test(tc.name, () => {
      const c = new CpuRateCache();
      assert.deepEqual(tc.samples.map(([s, u]) => c.record('k', at(s, u))), tc.want);
    });
  }
});

test('CpuRateCache: every 15 s scrape reads its own window while another reader samples every 1 s', () => {
  const c = new CpuRateCache({ minWindowMs: 1000 });
  // Load: 1 core until t=30, then 0.25 cores. The 1 s reader interleaves.
  const usage = (t: number) => (t <= 30 ? t : 30 + (t - 30) * 0.25);
  const scrapes: number[] = [];
  for (let t = 0; t <= 60; t += 1) {
    const r = c.record('k', at(t, usage(t)));
    if (t % 15 === 0 && t > 0) scrapes.push(r!);
  }
  // The 1 s reader dominates the window (1 s) — each read is exact for a steady load.
  assert.deepEqual(scrapes, [1e9, 1e9, 2.5e8, 2.5e8]);
});

test('CpuRateCache keeps few samples per key and forgets keys that are gone', () => {
  const c = new CpuRateCache({ minWindowMs: 1000, maxSamples: 4 });
  for (let i = 0; i < 1000; i++) c.record('a', { timestampNs: i * 1e6, usageCoreNanoSeconds: i * 1e6 });
  c.record('b', at(0, 0));
  assert.equal(c.size, 2);
  c.retain(new Set(['b']));
  assert.equal(c.size, 1);
  assert.equal(c.record('a', at(100, 100)), undefined);          // forgotten: a first sample again
});
