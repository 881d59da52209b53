import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseDurationMs, schedulerConfigFromYaml } from './config.js';
import { newTestFramework } from './testing/framework.js';

describe('KubeSchedulerConfiguration', () => {
  test('durations', () => {
    assert.deepEqual(['15s', '1m30s', '500ms', '2h'].map(parseDurationMs), [15_000, 90_000, 500, 7_200_000]);
    assert.throws(() => parseDurationMs('15'));
  });

  test('merges plugin sets over the defaults and sets weights and args', () => {
    const cfg = schedulerConfigFromYaml(`
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection: { leaderElect: false, leaseDuration: 20s, resourceName: my-scheduler }
podInitialBackoffSeconds: 2
profiles:
- schedulerName: my-scheduler
  plugins:
    multiPoint:
      disabled: [{ name: NodeResourcesBalancedAllocation }]
    score:
      enabled: [{ name: NodeResourcesFit, weight: 5 }]
      disabled: [{ name: TaintToleration }]
  pluginConfig:
  - name: NodeResourcesFit
    args: { scoringStrategy: { type: MostAllocated } }
`);
    assert.equal(cfg.leaderElect, false);
    assert.deepEqual(cfg.leaderElection, { leaseDurationMs: 20_000, name: 'my-scheduler' });
    assert.equal(cfg.podInitialBackoffMs, 2000);
    const fw = newTestFramework(cfg.profile);
    assert.equal(fw.schedulerName, 'my-scheduler');
    assert.deepEqual(fw.scorePlugins.map((s) => `${s.plugin.name}=${s.weight}`), ['NodeAffinity=2', 'NodeResourcesFit=5', 'PodTopologySpread=2', 'InterPodAffinity=2']);
    assert.ok(fw.filter.some((p) => p.name === 'TaintToleration'), 'disabled for score only');
  });

  test('an empty file means the default profile', () => {
    const fw = newTestFramework(schedulerConfigFromYaml('kind: KubeSchedulerConfiguration\n').profile);
    assert.equal(fw.scorePlugins.length, 6);
  });
});
