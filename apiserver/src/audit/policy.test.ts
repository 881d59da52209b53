import { test } from 'node:test';
import assert from 'node:assert/strict';
import { evaluatePolicy, parseAuditPolicy, ruleMatches, type AuditAttributes, type PolicyRule } from './policy.js';

const alice = { username: 'alice', groups: ['devs', 'system:authenticated'] };
const res = (verb: string, resource: string, o: Partial<AuditAttributes> = {}): AuditAttributes =>
  ({ user: alice, verb, resourceRequest: true, apiGroup: '', resource, subresource: '', namespace: 'default', name: '', ...o });
const url = (path: string, verb = 'get'): AuditAttributes => ({ user: alice, verb, resourceRequest: false, path });

test('rule matching (upstream checker.go semantics)', () => {
  const cases: { name: string; rule: Omit<PolicyRule, 'level'>; attrs: AuditAttributes; want: boolean }[] = [
    { name: 'empty rule matches everything', rule: {}, attrs: url('/healthz'), want: true },
    { name: 'users match', rule: { users: ['alice'] }, attrs: res('get', 'pods'), want: true },
    { name: 'users miss', rule: { users: ['bob'] }, attrs: res('get', 'pods'), want: false },
    { name: 'users need a user', rule: { users: ['alice'] }, attrs: { ...res('get', 'pods'), user: undefined }, want: false },
    { name: 'userGroups any', rule: { userGroups: ['x', 'devs'] }, attrs: res('get', 'pods'), want: true },
    { name: 'userGroups miss', rule: { userGroups: ['system:nodes'] }, attrs: res('get', 'pods'), want: false },
    { name: 'verbs', rule: { verbs: ['watch', 'list'] }, attrs: res('list', 'pods'), want: true },
    { name: 'verbs miss', rule: { verbs: ['create'] }, attrs: res('list', 'pods'), want: false },
    { name: 'resources core group', rule: { resources: [{ group: '', resources: ['secrets'] }] }, attrs: res('get', 'secrets'), want: true },
    { name: 'resources group defaults to core', rule: { resources: [{ resources: ['secrets'] }] }, attrs: res('get', 'secrets'), want: true },
    { name: 'resources other group', rule: { resources: [{ group: 'apps', resources: ['secrets'] }] }, attrs: res('get', 'secrets'), want: false },
    { name: 'group with no resources: all of it', rule: { resources: [{ group: 'apps' }] }, attrs: res('get', 'deployments', { apiGroup: 'apps' }), want: true },
    { name: 'plain resource does not match its subresource', rule: { resources: [{ resources: ['pods'] }] }, attrs: res('get', 'pods', { subresource: 'log' }), want: false },
    { name: 'resource/subresource', rule: { resources: [{ resources: ['pods/log'] }] }, attrs: res('get', 'pods', { subresource: 'log' }), want: true },
    { name: '*/status', rule: { resources: [{ group: 'apps', resources: ['*/status'] }] }, attrs: res('update', 'deployments', { apiGroup: 'apps', subresource: 'status' }), want: true },
    { name: 'pods/*', rule: { resources: [{ resources: ['pods/*'] }] }, attrs: res('create', 'pods', { subresource: 'exec' }), want: true },
    { name: '* matches any resource', rule: { resources: [{ resources: ['*'] }] }, attrs: res('get', 'configmaps'), want: true },
    { name: 'resourceNames', rule: { resources: [{ resources: ['configmaps'], resourceNames: ['cfg'] }] }, attrs: res('get', 'configmaps', { name: 'cfg' }), want: true },
    { name: 'resourceNames miss', rule: { resources: [{ resources: ['configmaps'], resourceNames: ['cfg'] }] }, attrs: res('get', 'configmaps', { name: 'other' }), want: false },
    { name: 'namespaces', rule: { namespaces: ['kube-system'] }, attrs: res('get', 'pods', { namespace: 'kube-system' }), want: true },
    { name: 'namespaces miss', rule: { namespaces: ['kube-system'] }, attrs: res('get', 'pods'), want: false },
    { name: 'namespace "" is cluster scope', rule: { namespaces: [''] }, attrs: res('get', 'nodes', { namespace: '' }), want: true },
    { name: 'resource rules skip non-resource URLs', rule: { resources: [{ resources: ['*'] }] }, attrs: url('/api'), want: false },
    { name: 'nonResourceURLs exact', rule: { nonResourceURLs: ['/healthz'] }, attrs: url('/healthz'), want: true },
    { name: 'nonResourceURLs prefix*', rule: { nonResourceURLs: ['/healthz*'] }, attrs: url('/healthz/etcd'), want: true },
    { name: 'nonResourceURLs miss', rule: { nonResourceURLs: ['/version'] }, attrs: url('/healthz'), want: false },
    { name: 'nonResourceURLs skip resources', rule: { nonResourceURLs: ['*'] }, attrs: res('get', 'pods'), want: false },
  ];
  for (const c of cases) assert.equal(ruleMatches({ level: 'Metadata', ...c.rule }, c.attrs), c.want, c.name);
});

test('first matching rule wins; no match is None; omitStages are the policy\'s plus the rule\'s', () => {
  const p = parseAuditPolicy(`
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: None
    nonResourceURLs: ["/healthz*", /version]
  - level: Metadata
    resources: [{group: "", resources: [secrets, configmaps]}, {group: authentication.k8s.io, resources: [tokenreviews]}]
    omitStages: [ResponseStarted]
  - level: RequestResponse
    users: [alice]
    verbs: [create]
  - level: Request
    verbs: [create, update, patch, delete]
`);
  assert.deepEqual(evaluatePolicy(p, url('/healthz/etcd')), { level: 'None', omitStages: ['RequestReceived'] });
  assert.deepEqual(evaluatePolicy(p, res('create', 'secrets')), { level: 'Metadata', omitStages: ['RequestReceived', 'ResponseStarted'] });
  assert.equal(evaluatePolicy(p, res('create', 'tokenreviews', { apiGroup: 'authentication.k8s.io', namespace: '' })).level, 'Metadata');
  assert.equal(evaluatePolicy(p, res('create', 'pods')).level, 'RequestResponse');
  assert.equal(evaluatePolicy(p, res('create', 'pods', { user: { username: 'bob', groups: [] } })).level, 'Request');
  assert.equal(evaluatePolicy(p, res('get', 'pods')).level, 'None');
});

test('invalid policies are refused', () => {
  for (const text of [
    'kind: Other',
    'apiVersion: audit.k8s.io/v1beta1\nkind: Policy',
    'kind: Policy\nrules: [{level: Verbose}]',
    'kind: Policy\nrules: [{level: None, omitStages: [Done]}]',
    'kind: Policy\nrules: [{level: None, nonResourceURLs: ["/a"], resources: [{resources: [pods]}]}]',
    'kind: Policy\nrules: [{level: None, nonResourceURLs: ["/a*b"]}]',
  ]) assert.throws(() => parseAuditPolicy(text), Error, text);
});

test("the default policy of `make up` parses; Secrets, ConfigMaps and TokenReviews are Metadata only", async () => {
  const { readFileSync } = await import('node:fs');
  const p = parseAuditPolicy(readFileSync(new URL('../../audit-policy.default.yaml', import.meta.url), 'utf8'));
  const admin = { username: 'kubernetes-admin', groups: ['system:masters'] };
  for (const verb of ['create', 'update', 'patch', 'get', 'list', 'watch', 'delete']) {
    assert.equal(evaluatePolicy(p, res(verb, 'secrets', { user: admin })).level, 'Metadata', verb);
    assert.equal(evaluatePolicy(p, res(verb, 'configmaps', { user: admin })).level, 'Metadata', verb);
  }
  assert.equal(evaluatePolicy(p, res('create', 'tokenreviews', { apiGroup: 'authentication.k8s.io', namespace: '' })).level, 'Metadata');
  assert.equal(evaluatePolicy(p, res('create', 'serviceaccounts', { subresource: 'token' })).level, 'Metadata');
  assert.equal(evaluatePolicy(p, res('create', 'pods')).level, 'Request');
  assert.equal(evaluatePolicy(p, res('list', 'pods')).level, 'Metadata');
  assert.equal(evaluatePolicy(p, res('update', 'leases', { apiGroup: 'coordination.k8s.io', namespace: 'kube-node-lease' })).level, 'None');
  assert.equal(evaluatePolicy(p, url('/readyz')).level, 'None');
  assert.deepEqual(evaluatePolicy(p, res('create', 'pods')).omitStages, ['RequestReceived']);
});
