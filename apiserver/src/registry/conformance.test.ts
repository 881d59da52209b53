/** The registry conformance suite on a built-in resource (apps/v1 Deployments) and a custom one (the CronTab CRD). */
import { silentLogger } from '@mk8s/component-base';
import { FakeClock } from '@mk8s/component-base/testing';
import { MemoryStorage } from '../testing/memory-storage.js';
import { defineRegistryConformance } from '../testing/registry-conformance.js';
import { buildApiServer } from '../server.js';
import { crontabCrd } from '../apiextensions/testdata/crontab.js';

type Json = Record<string, any>;

async function server(t: { after(fn: () => unknown): void }) {
  const app = await buildApiServer({ storage: new MemoryStorage(), logger: silentLogger(), clock: new FakeClock(Date.parse('2026-01-01T00:00:00Z')) });
  await app.ready();
  t.after(() => app.close());
  return app;
}

defineRegistryConformance('apps/v1 deployments (built-in)', {
  setup: server,
  group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment', namespaced: true,
  object: (name) => ({
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name },
    spec: { replicas: 1, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
  }),
  changeSpec: (o) => ({ ...o, spec: { ...o['spec'], replicas: 2 } }),
  specValue: (o) => o['spec'].replicas,
  status: { observedGeneration: 1, replicas: 1 },
  scale: true,
});

defineRegistryConformance('stable.example.com/v1 crontabs (custom)', {
  setup: async (t) => {
    const app = await server(t);
    await app.inject({ method: 'POST', url: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', payload: crontabCrd() });
    const deadline = Date.now() + 5000;
    while ((await app.inject({ url: '/apis/stable.example.com/v1' })).statusCode !== 200) {
      if (Date.now() > deadline) throw new Error('the CRD was not served');
      await new Promise((r) => setTimeout(r, 10));
    }
    return app;
  },
  group: 'stable.example.com', version: 'v1', resource: 'crontabs', kind: 'CronTab', namespaced: true,
  object: (name) => ({ apiVersion: 'stable.example.com/v1', kind: 'CronTab', metadata: { name }, spec: { cronSpec: '* * * * */5', replicas: 1 } }),
  changeSpec: (o: Json) => ({ ...o, spec: { ...o['spec'], replicas: 2 } }),
  specValue: (o) => o['spec'].replicas,
  status: { replicas: 1 },
  scale: true,
});
