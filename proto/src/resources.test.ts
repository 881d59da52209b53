import { test } from 'node:test';
import assert from 'node:assert/strict';
import { linuxContainerResources, milliCpuToQuota, milliCpuToShares } from './resources.js';

test('cpu shares and quota follow the kubelet formulas', () => {
  for (const [milli, shares] of [[0, 2], [1, 2], [100, 102], [250, 256], [1000, 1024], [1_000_000, 262_144]] as const) {
    assert.equal(milliCpuToShares(milli), shares, `shares for ${milli}m`);
  }
  for (const [milli, quota] of [[0, 0], [5, 1000], [100, 10_000], [500, 50_000], [2000, 200_000]] as const) {
    assert.equal(milliCpuToQuota(milli), quota, `quota for ${milli}m`);
  }
});

test('linuxContainerResources defaults the request to the limit and omits what is unlimited', () => {
  assert.deepEqual(linuxContainerResources({}), { cpuShares: 2 });
  assert.deepEqual(linuxContainerResources({ cpuLimitMilli: 500, memoryLimitBytes: 32 * 1024 * 1024 }), {
    cpuShares: 512, cpuPeriod: 100_000, cpuQuota: 50_000, memoryLimitInBytes: 32 * 1024 * 1024,
  });
  assert.deepEqual(linuxContainerResources({ cpuRequestMilli: 100 }), { cpuShares: 102 });
});
