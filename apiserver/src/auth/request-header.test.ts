import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request } from 'node:https';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { ensureCa, issueCertificate } from '@mk8s/component-base/pki';
import type { IncomingMessage } from 'node:http';
import { RequestHeaderAuthenticator, userFromHeaders } from './request-header.js';
import { distinctHeaders } from './distinct-headers.js';

const HEADERS = { usernameHeaders: ['X-Remote-User'], groupHeaders: ['X-Remote-Group'], extraHeadersPrefixes: ['X-Remote-Extra-'] };

test('userFromHeaders: user, every group header value (+ system:authenticated), extra keys unescaped; no user → no opinion', () => {
  const cases: { name: string; h: Record<string, string[]>; want: ReturnType<typeof userFromHeaders> }[] = [
    { name: 'no username header', h: { 'x-remote-group': ['g'] }, want: undefined },
    { name: 'empty username', h: { 'x-remote-user': [''] }, want: undefined },
    { name: 'user only', h: { 'x-remote-user': ['alice'] }, want: { username: 'alice', groups: ['system:authenticated'] } },
    {
      name: 'groups and extra', h: { 'x-remote-user': ['alice'], 'x-remote-group': ['a', 'b'], 'x-remote-extra-scopes': ['s1', 's2'], 'x-remote-extra-example.com%2fk': ['v'] },
      want: { username: 'alice', groups: ['a', 'b', 'system:authenticated'], extra: { scopes: ['s1', 's2'], 'example.com/k': ['v'] } },
    },
  ];
  for (const c of cases) assert.deepEqual(userFromHeaders(c.h, HEADERS), c.want, c.name);
});

test('userFromHeaders never throws: no headers at all, single strings instead of lists', () => {
  const cases: { name: string; h: Parameters<typeof userFromHeaders>[0]; want: ReturnType<typeof userFromHeaders> }[] = [
    { name: 'undefined headers', h: undefined, want: undefined },
    { name: 'empty headers', h: {}, want: undefined },
    { name: 'string values (a flat IncomingHttpHeaders)', h: { 'x-remote-user': 'bob', 'x-remote-group': 'g', 'x-remote-extra-k': 'v' }, want: { username: 'bob', groups: ['g', 'system:authenticated'], extra: { k: ['v'] } } },
    { name: 'an undefined value', h: { 'x-remote-user': 'bob', 'x-remote-group': undefined, 'x-remote-extra-k': undefined }, want: { username: 'bob', groups: ['system:authenticated'] } },
  ];
  for (const c of cases) assert.deepEqual(userFromHeaders(c.h, HEADERS), c.want, c.name);
});

test('distinctHeaders: headersDistinct when the request has it, else headers as lists; never throws', () => {
  const cases: { name: string; req: unknown; want: Record<string, string[]> }[] = [
    { name: 'headersDistinct kept apart', req: { headers: { 'x-remote-group': 'a, b' }, headersDistinct: { 'x-remote-group': ['a', 'b'] } }, want: { 'x-remote-group': ['a', 'b'] } },
    { name: 'no headersDistinct (inject, HTTP/2 compat)', req: { headers: { 'x-remote-user': 'alice', 'set-cookie': ['c1', 'c2'] } }, want: { 'x-remote-user': ['alice'], 'set-cookie': ['c1', 'c2'] } },
    { name: 'headersDistinct null', req: { headers: { a: '1' }, headersDistinct: null }, want: { a: ['1'] } },
    { name: 'no headers either', req: {}, want: {} },
    { name: 'no request', req: undefined, want: {} },
  ];
  for (const c of cases) assert.deepEqual(distinctHeaders(c.req as never), c.want, c.name);
});

test('RequestHeaderAuthenticator: a request without headersDistinct is answered, not thrown on', async () => {
  const authn = new RequestHeaderAuthenticator({ clientCA: '', allowedNames: [], ...HEADERS });
  const bare = (headers: Record<string, string>) => ({ headers, socket: {} }) as unknown as IncomingMessage;
  // Without a TLS socket there is no verified proxy: no opinion, whatever the headers assert.
  assert.equal(await authn.authenticate(bare({ 'x-remote-user': 'alice' })), undefined);
  assert.equal(await authn.authenticate(bare({})), undefined);
});

test('RequestHeaderAuthenticator trusts the headers only with a requestheader-CA certificate of an allowed CN', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'mk8s-rh-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const proxyCa = await ensureCa({ cert: join(dir, 'fp.crt'), key: join(dir, 'fp.key') }, new Date(), 'front-proxy-ca');
  const clientCa = await ensureCa({ cert: join(dir, 'ca.crt'), key: join(dir, 'ca.key') }, new Date(), 'mk8s-ca');
  const serving = await issueCertificate(clientCa, { commonName: 'server', usage: 'server', ips: ['127.0.0.1'] });
  const proxy = await issueCertificate(proxyCa, { commonName: 'front-proxy-client', usage: 'client' });
  const otherCn = await issueCertificate(proxyCa, { commonName: 'someone-else', usage: 'client' });
  const wrongCa = await issueCertificate(clientCa, { commonName: 'front-proxy-client', usage: 'client' });
  const servingOnly = await issueCertificate(proxyCa, { commonName: 'front-proxy-client', usage: 'server' });
  const authn = new RequestHeaderAuthenticator({ clientCA: proxyCa.certPem, allowedNames: ['front-proxy-client'], ...HEADERS });
  // As the apiserver serves: the TLS layer trusts the client CA and lets other certificates through.
  const server = createServer({ cert: serving.certPem, key: serving.keyPem, ca: clientCa.certPem, requestCert: true, rejectUnauthorized: false }, (req, res) => {
    authn.authenticate(req).then((u) => res.end(JSON.stringify(u ?? null)), (err: unknown) => { res.statusCode = 500; res.end(String(err)); });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  t.after(() => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }));
  const port = (server.address() as AddressInfo).port;
  const ask = (client: { certPem: string; keyPem: string } | undefined, headers: Record<string, string>) => new Promise<unknown>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/', ca: clientCa.certPem, headers, agent: false, ...(client ? { cert: client.certPem, key: client.keyPem } : {}) }, (res) => {
      let body = ''; res.on('data', (c: Buffer) => { body += String(c); }); res.on('end', () => resolve(JSON.parse(body)));
    });
    req.on('error', reject); req.end();
  });
  const asserted = { 'X-Remote-User': 'alice', 'X-Remote-Group': 'devs' };
  assert.deepEqual(await ask(proxy, asserted), { username: 'alice', groups: ['devs', 'system:authenticated'] });
  assert.equal(await ask(proxy, {}), null, 'proxy certificate without a username header');
  assert.equal(await ask(otherCn, asserted), null, 'CN not in allowed names');
  assert.equal(await ask(wrongCa, asserted), null, 'certificate of another CA');
  assert.equal(await ask(servingOnly, asserted), null, 'a serving certificate (no clientAuth usage) of the requestheader CA');
  assert.equal(await ask(undefined, asserted), null, 'no client certificate');
});
