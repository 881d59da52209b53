import { test, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { Services, EndpointSlices } from '@mk8s/api';
import { FakeInformer } from '@mk8s/client/testing';
import { FakeClock } from '@mk8s/component-base/testing';
import { silentLogger } from '@mk8s/component-base';
import { Proxier, cleanupRules, type EndpointSliceObj, type ServiceObj } from './proxier.js';
import { FakeIptablesRunner } from './testing/fake-iptables-runner.js';
import { serviceChain, endpointChain } from './chain-names.js';
import { JUMP_RULES, renderRules } from './rules.js';
import { endpointsByServicePort, servicePorts } from './service-state.js';

let clock: FakeClock;
let ipt: FakeIptablesRunner;
let services: FakeInformer<ServiceObj>;
let slices: FakeInformer<EndpointSliceObj>;
let proxier: Proxier;

const svc = (name: string, ip: string): ServiceObj => ({ metadata: { name, namespace: 'default' }, spec: { clusterIP: ip, ports: [{ name: 'http', port: 80, protocol: 'TCP' }] } });
const slice = (svcName: string, ips: string[]): EndpointSliceObj => ({
  metadata: { name: `${svcName}-1`, namespace: 'default', labels: { 'kubernetes.io/service-name': svcName } },
  addressType: 'IPv4', ports: [{ name: 'http', port: 8080, protocol: 'TCP' }], endpoints: ips.map((ip) => ({ addresses: [ip], conditions: { ready: true } })),
});
/** Lets the runner's microtasks (async sync body) finish after timers fired. */
const settle = async () => { for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r)); };
/** One sync period: the periodic check reads iptables, then asks the runner, which fires at once (step 0). */
const period = async () => { clock.step(30_000); await settle(); clock.step(0); await settle(); };

beforeEach(async () => {
  clock = new FakeClock();
  ipt = new FakeIptablesRunner();
  services = new FakeInformer<ServiceObj>(Services);
  slices = new FakeInformer<EndpointSliceObj>(EndpointSlices);
  services.seed(svc('web', '10.96.0.10'));
  slices.seed(slice('web', ['10.244.1.2']));
  proxier = new Proxier({ services, endpointSlices: slices, iptables: ipt, clusterCidr: '10.244.0.0/16', minSyncPeriodMs: 1000, syncPeriodMs: 30_000, clock, logger: silentLogger() });
  proxier.start();
  clock.step(0);
  await settle();
});

test('the first sync is full: one restore that also carries the jumps from the built-in chains', () => {
  assert.equal(ipt.restores.length, 1);
  assert.ok(ipt.last().includes('-I PREROUTING 1 -m comment --comment "kubernetes service portals" -j KUBE-SERVICES'));
  assert.ok(ipt.last().includes(serviceChain('default/web:http', 'TCP')));
  assert.equal(ipt.rules.size, JUMP_RULES.length);
  assert.ok(proxier.healthy());
});

test('an event that changes nothing calls no iptables-restore', async () => {
  services.update(svc('web', '10.96.0.10'));
  clock.step(1000);
  await settle();
  assert.equal(ipt.restores.length, 1);
});

test('changes within the min sync period are coalesced into one restore after it', async () => {
  slices.update(slice('web', ['10.244.1.2', '10.244.2.2']));
  services.add(svc('api', '10.96.0.11'));
  clock.step(500);
  await settle();
  assert.equal(ipt.restores.length, 1, 'no sync before the min sync period');
  clock.step(500);
  await settle();
  assert.equal(ipt.restores.length, 2);
  assert.ok(ipt.last().includes(endpointChain('default/web:http', 'TCP', '10.244.2.2:8080')));
  assert.ok(ipt.last().includes('default/api:http has no endpoints'));
});

test('a deleted Service loses its chains', async () => {
  const svcChain = serviceChain('default/web:http', 'TCP');
  services.delete(svc('web', '10.96.0.10'));
  clock.step(1000);
  await settle();
  assert.ok(ipt.last().includes(`-X ${svcChain}`));
  assert.ok(!ipt.chains.nat.has(svcChain));
});

test('a failed restore is retried as a full sync', async () => {
  ipt.failNextRestore(new Error('iptables-restore: line 3 failed'));
  slices.update(slice('web', ['10.244.1.3']));
  clock.step(1000);
  await settle();
  assert.equal(proxier.healthy(), false);
  ipt.rules.clear();                   // someone flushed the jumps meanwhile
  clock.step(1000);
  await settle();
  assert.equal(ipt.restores.length, 2);
  assert.equal(ipt.rules.size, JUMP_RULES.length);
  assert.ok(proxier.healthy());
});

test('a failing iptables-save aborts the full sync before anything is applied; the retry is full again', async () => {
  ipt.failNextSave(new Error('iptables-save: exit 4'));
  ipt.flushTable('filter');            // the periodic check finds it: the next sync is full
  await period();
  assert.equal(ipt.restores.length, 1, 'nothing restored');
  assert.equal(proxier.healthy(), false);
  clock.step(1000);
  await settle();
  assert.equal(ipt.restores.length, 2);
  assert.ok(ipt.last().includes(':KUBE-SERVICES - [0:0]') && ipt.last().includes('*filter'), 'full');
  assert.ok(proxier.healthy());
});

test('the periodic check reads two chains back and restores nothing while they are intact', async () => {
  await period();
  assert.equal(ipt.restores.length, 1);
  assert.deepEqual(ipt.chainRuleReads, ['nat KUBE-MARK-MASQ', 'filter KUBE-FORWARD']);
  assert.ok(proxier.healthy());
});

test('a flushed table is found by the periodic check and repaired by a full sync with the jumps', async () => {
  ipt.flushTable('nat');
  await period();
  assert.equal(ipt.restores.length, 2);
  assert.ok(ipt.last().includes(':KUBE-SERVICES - [0:0]') && ipt.last().includes('-I PREROUTING 1 '), 'full, jumps re-added');
  assert.equal(ipt.rules.size, JUMP_RULES.length);
});

test('the periodic full sync re-applies unchanged rules once the full sync period passed', async () => {
  for (let i = 0; i < 119; i++) await period();
  assert.equal(ipt.restores.length, 1, 'no full sync within the hour');
  await period();
  assert.equal(ipt.restores.length, 2);
  // The same rules; the jumps from the built-in chains are only re-added when missing.
  assert.equal(ipt.restores[1], ipt.restores[0]!.split('\n').filter((l) => !l.startsWith('-I ')).join('\n'));
});

test('cleanup removes the jumps and every chain of ours', async () => {
  await cleanupRules(ipt);
  assert.equal(ipt.rules.size, 0);
  assert.deepEqual([...ipt.chains.nat].filter((c) => c.startsWith('KUBE-')), []);
  assert.deepEqual([...ipt.chains.filter].filter((c) => c.startsWith('KUBE-')), []);
});

test('a one-endpoint change re-renders only its Service and restores only the chains that changed', async () => {
  services.add(svc('api', '10.96.0.11'));
  slices.add(slice('api', ['10.244.3.3']));
  clock.step(1000);
  await settle();
  const results: { input?: string; servicesRendered?: number; full: boolean }[] = [];
  const p2 = new Proxier({ services, endpointSlices: slices, iptables: ipt, clusterCidr: '10.244.0.0/16', minSyncPeriodMs: 1000, syncPeriodMs: 30_000, clock, logger: silentLogger(), onSync: (r) => results.push(r) });
  const f = await p2.syncProxyRules();
  // The streamed full input is renderRules' text (plus the jumps, which are already there here).
  const pure = renderRules({ services: servicePorts(services.lister.list()), endpoints: endpointsByServicePort(slices.lister.list()), clusterCidr: '10.244.0.0/16' }).text;
  assert.equal(f.input, pure);
  slices.update(slice('web', ['10.244.1.2', '10.244.2.2']));
  const r = await p2.syncProxyRules();
  assert.equal(r.full, false);
  assert.equal(r.servicesRendered, 1);
  const input = r.input ?? '';
  assert.ok(!input.includes('*filter'), 'filter unchanged');
  assert.ok(!input.includes('KUBE-SERVICES'), 'KUBE-SERVICES unchanged');
  assert.ok(input.includes(`:${serviceChain('default/web:http', 'TCP')} - [0:0]`));
  assert.ok(input.includes(`:${endpointChain('default/web:http', 'TCP', '10.244.2.2:8080')} - [0:0]`));
  assert.ok(!input.includes(`:${endpointChain('default/web:http', 'TCP', '10.244.1.2:8080')} - [0:0]`), 'the unchanged endpoint is left alone');
  assert.ok(!input.includes(serviceChain('default/api:http', 'TCP')), 'the other Service is left alone');
  assert.deepEqual(results.map((x) => x.full), [true, false]);
  p2.stop();
});

test('crossing 1,000 endpoints turns the next sync into a full one without per-endpoint comments, and back', async () => {
  const many = Array.from({ length: 1001 }, (_, i) => `10.244.${2 + (i >> 8)}.${i & 255}`);
  slices.update(slice('web', many));
  clock.step(1000);
  await settle();
  const large = ipt.last();
  assert.ok(large.includes(':KUBE-POSTROUTING - [0:0]'), 'a full restore (only those rewrite the fixed chains)');
  const sep = endpointChain('default/web:http', 'TCP', `${many[0]}:8080`);
  assert.ok(large.includes(`-A ${sep} -s ${many[0]}/32 -j KUBE-MARK-MASQ`), 'no comment in large-cluster mode');
  slices.update(slice('web', many.slice(0, 3)));
  clock.step(1000);
  await settle();
  assert.ok(ipt.last().includes(`-A ${sep} -m comment --comment default/web:http -s ${many[0]}/32 -j KUBE-MARK-MASQ`), 'comments again');
  assert.ok(ipt.last().includes(':KUBE-POSTROUTING - [0:0]'), 'a full restore again');
});

test('a full sync asked for by the periodic check while a partial restore runs is not lost', async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => { release = r; });
  const restore = ipt.restore.bind(ipt);
  ipt.restore = async (input: string | AsyncIterable<string>) => { await gate; return restore(input); };
  slices.update(slice('web', ['10.244.1.2', '10.244.1.3']));
  clock.step(1000);
  await settle();                      // the partial sync is now waiting in its restore
  ipt.flushTable('nat');
  clock.step(29_000);                  // the periodic check (t = 30 s) finds the table flushed
  await settle();
  release();
  await settle();
  assert.equal(ipt.restores.length, 2, 'the partial one');
  assert.ok(!ipt.last().includes(':KUBE-POSTROUTING - [0:0]'));
  clock.step(1000);
  await settle();
  assert.equal(ipt.restores.length, 3);
  assert.ok(ipt.last().includes(':KUBE-POSTROUTING - [0:0]'), 'then a full one');
});
