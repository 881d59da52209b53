import { test } from 'node:test';
import assert from 'node:assert/strict';
import { haproxyArgs, parseServerStates, renderHaproxyConfig } from './haproxy.js';
import { apiserverCertIPs, apiserverPlans, isApiserverName } from './network-plan.js';

const opts = {
  binds: ['127.0.0.1:6443', '10.240.0.1:6443'],
  servers: [{ name: 'apiserver-0', address: '10.240.0.2', port: 6443 }, { name: 'apiserver-1', address: '10.240.0.3', port: 6443 }],
  caFile: '/s/pki/ca.crt', statsSocket: '/s/run/haproxy.sock',
};

test('renderHaproxyConfig: TCP mode, one bind per address, one server per apiserver, /readyz checked over TLS with the CA', () => {
  const cfg = renderHaproxyConfig(opts);
  const lines = cfg.split('\n').map((l) => l.trim());
  for (const want of [
    'mode tcp', 'bind 127.0.0.1:6443', 'bind 10.240.0.1:6443', 'default_backend apiservers',
    'server apiserver-0 10.240.0.2:6443', 'server apiserver-1 10.240.0.3:6443',
    'option httpchk', 'http-check connect ssl', 'http-check send meth GET uri /readyz', 'http-check expect status 200',
    'retries 3', 'option redispatch 1', 'stats socket /s/run/haproxy.sock mode 600 level admin',
  ]) assert.ok(lines.includes(want), `has "${want}"`);
  const defaults = lines.find((l) => l.startsWith('default-server'))!;
  for (const w of ['check', 'verify required', 'ca-file /s/pki/ca.crt']) assert.ok(defaults.includes(w), `default-server has ${w}`);
  assert.ok(!defaults.includes('shutdown-sessions'), 'a busy server marked down keeps its sessions');
  // Watches idle for minutes: no timeout shorter than an hour on established sessions.
  for (const t of ['client', 'server', 'tunnel']) assert.ok(lines.includes(`timeout ${t} 1h`), t);
  assert.ok(!/mode http/.test(cfg), 'never terminates TLS (client certificates must reach the apiservers)');
  assert.ok(defaults.includes('inter 2s fall 3 rise 2'), 'haproxy\'s default check timing: a slow TLS handshake on a busy machine is no failure');
  // Every check failing at once (etcd quorum lost: /readyz 503 everywhere) must still reach an apiserver's 5xx.
  assert.ok(lines.includes('option allbackups'));
  assert.ok(lines.includes('server apiserver-0-fallback 10.240.0.2:6443 backup no-check'));
  assert.ok(lines.includes('server apiserver-1-fallback 10.240.0.3:6443 backup no-check'));
});

test('renderHaproxyConfig without a CA checks /readyz over plain HTTP', () => {
  const { caFile: _c, ...plain } = opts;
  const cfg = renderHaproxyConfig(plain);
  assert.ok(!cfg.includes('connect ssl') && !cfg.includes('verify') && cfg.includes('http-check send meth GET uri /readyz'));
});

test('haproxyArgs: foreground, config path among the first two arguments', () => {
  assert.deepEqual(haproxyArgs('/s/haproxy.cfg'), ['-f', '/s/haproxy.cfg', '-db']);
});

test('parseServerStates reads the backend servers of show stat', () => {
  const csv = [
    '# pxname,svname,qcur,qmax,scur,smax,slim,stot,bin,bout,dreq,dresp,ereq,econ,eresp,wretr,wredis,status,weight',
    'apiserver,FRONTEND,,,0,1,4096,3,0,0,0,0,0,,,,,OPEN,',
    'apiservers,apiserver-0,0,0,0,1,,2,0,0,,0,,0,0,0,0,UP,1',
    'apiservers,apiserver-1,0,0,0,0,,0,0,0,,0,,0,0,0,0,DOWN,1',
    'apiservers,apiserver-2,0,0,0,0,,0,0,0,,0,,0,0,0,0,UP 1/2,1',
    'apiservers,apiserver-0-fallback,0,0,0,0,,0,0,0,,0,,0,0,0,0,no check,1',
    'apiservers,BACKEND,0,0,0,1,410,2,0,0,0,0,,0,0,0,0,UP,2',
    '',
  ].join('\n');
  assert.deepEqual(parseServerStates(csv), { 'apiserver-0': 'UP', 'apiserver-1': 'DOWN', 'apiserver-2': 'UP 1/2' });
  assert.deepEqual(parseServerStates(''), {}, 'no answer: nothing');
});

test('apiserverPlans: one apiserver as before (no balancer), N each on its own address', () => {
  assert.deepEqual(apiserverPlans(1), [{ name: 'apiserver', ip: '10.240.0.1', bindAddress: '127.0.0.1,10.240.0.1', port: 6443, readyHost: '127.0.0.1' }]);
  const three = apiserverPlans(3);
  assert.deepEqual(three.map((a) => [a.name, a.bindAddress]), [['apiserver-0', '10.240.0.2'], ['apiserver-1', '10.240.0.3'], ['apiserver-2', '10.240.0.4']]);
  for (const a of three) assert.ok(apiserverCertIPs().includes(a.ip), `${a.ip} in the serving certificate`);
  for (const bad of [0, 10, 1.5]) assert.throws(() => apiserverPlans(bad), /--apiservers must be 1 to 9/);
  assert.deepEqual(['apiserver', 'apiserver-0', 'apiserver-12', 'haproxy', 'apiserver-x'].map(isApiserverName), [true, true, true, false, false]);
});
