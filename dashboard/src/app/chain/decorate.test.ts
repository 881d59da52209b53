import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gatherTrace, traceLinks, type ApiGet } from '@mk8s/api/trace';
import { decorateForDashboard, proxyRulesPath } from './decorate';

const T0 = '2026-11-30T09:00:00Z';
const POD = { metadata: { name: 'web', namespace: 'ns', uid: 'p', labels: { app: 'web' }, resourceVersion: '5' }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'mk8s/test-server' }] }, status: { phase: 'Running', podIP: '10.244.0.5', conditions: [{ type: 'PodScheduled', status: 'True' }, { type: 'Ready', status: 'True' }], containerStatuses: [{ name: 'c', image: 'mk8s/test-server', imageID: 'docker://sha', ready: true, restartCount: 0, state: { running: { startedAt: T0 } } }] } };
const list = (...items: unknown[]) => ({ metadata: { resourceVersion: '5' }, items });
const node = (name: string) => ({ metadata: { name }, status: { conditions: [{ type: 'Ready', status: 'True' }] } });
const RULES = proxyRulesPath('ns', 'web', ['n1', 'n2']);
const evidence = (n: string, present = true) => ({ node: n, present, endpoints: present ? 1 : 0, detail: present ? `ns/web → KUBE-SVC-ABC with 1 endpoints` : 'no KUBE-SERVICES rule for ns/web' });

/** The apiserver (a Pod behind Service web, two nodes) and the dashboard server's endpoint, by path. */
function fakeGet(rules: unknown | Error): ApiGet & { asked: string[] } {
  const asked: string[] = [];
  const routes: Record<string, unknown> = {
    '/api/v1/namespaces/ns/pods/web': POD,
    '/api/v1/namespaces/ns/services': list({ metadata: { name: 'web', namespace: 'ns' }, spec: { selector: { app: 'web' }, clusterIP: '10.96.0.20' } }),
    '/apis/discovery.k8s.io/v1/namespaces/ns/endpointslices': list({ metadata: { name: 'web-x', labels: { 'kubernetes.io/service-name': 'web' } }, endpoints: [{ addresses: ['10.244.0.5'], conditions: { ready: true } }] }),
    '/api/v1/nodes': list(node('n1'), node('n2')),
  };
  const get = async (path: string) => {
    asked.push(path);
    if (path === RULES) { if (rules instanceof Error) throw rules; return rules; }
    return path in routes ? structuredClone(routes[path]) : list();
  };
  return Object.assign(get, { asked });
}

const proxyLink = async (rules: unknown | Error) => {
  const get = fakeGet(rules);
  const g = await gatherTrace(get, { kind: 'Pod', namespace: 'ns', name: 'web' });
  await decorateForDashboard(g, get);
  return { link: traceLinks(g).find((l) => l.step === 'kube-proxy'), asked: get.asked };
};

const notImplemented = Object.assign(new Error('kube-proxy\'s rules are not readable by this dashboard'), { code: 501, reason: 'NotImplemented' });

for (const tc of [
  { name: 'rules on every node: ok, with the KUBE-SVC evidence', rules: { kind: 'ProxyRules', nodes: { n1: evidence('n1'), n2: evidence('n2') } }, status: 'ok', evidence: /KUBE-SVC rules on n1 \(1 endpoints\), n2 \(1 endpoints\)/ },
  { name: 'a node without the rules: broken, owned by that kube-proxy', rules: { kind: 'ProxyRules', nodes: { n1: evidence('n1'), n2: evidence('n2', false) } }, status: 'broken', evidence: /n2: no KUBE-SERVICES rule for ns\/web/ },
  { name: 'not readable where the dashboard runs (501): info, as before', rules: notImplemented, status: 'info', evidence: /not visible from the API: kube-proxy on n1, n2/ },
  { name: 'an answer that leaves a node out: info, not broken', rules: { kind: 'ProxyRules', nodes: { n1: evidence('n1') } }, status: 'info', evidence: /not visible from the API/ },
]) {
  test(`decorateForDashboard: ${tc.name}`, async () => {
    const { link, asked } = await proxyLink(tc.rules);
    assert.equal(link?.status, tc.status);
    assert.match(link!.evidence, tc.evidence);
    assert.equal(asked.filter((p) => p.startsWith('/mk8s/')).length, 1, 'one call per proxied Service');
  });
}

test('proxyRulesPath: the Service and the nodes, encoded', () => {
  assert.equal(proxyRulesPath('ns', 'web', ['n1', 'n2']), '/mk8s/v1/namespaces/ns/services/web/proxy-rules?nodes=n1,n2');
  assert.equal(proxyRulesPath('ns', 'web', []), '/mk8s/v1/namespaces/ns/services/web/proxy-rules');
});
