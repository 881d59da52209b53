/**
 * Hostile requests for T13 (fast-check, deterministic from a seed): random paths built from API
 * words and junk, verbs, content types, bodies (JSON, YAML with anchors, protobuf-looking bytes,
 * Kubernetes-shaped objects with hostile fields, huge numbers, deep nesting), query strings.
 * Every mutating request stays inside one sandbox namespace (and only on resources a ResourceQuota
 * of 0 keeps empty or that act on nothing), so the fuzzer cannot hurt the cluster it probes.
 * `send()` answers each request's status code over a bounded pool of keep-alive connections.
 */
import fc from 'fast-check';
import { Agent, request as httpsRequest } from 'node:https';
import { request as httpRequest, Agent as HttpAgent } from 'node:http';

export interface FuzzRequest { method: string; path: string; headers: Record<string, string>; body?: Buffer }

const WORDS = ['api', 'apis', 'v1', 'v1beta1', 'v2', 'namespaces', 'default', 'kube-system', 'pods', 'configmaps', 'secrets', 'services', 'nodes',
  'apps', 'deployments', 'replicasets', 'batch', 'jobs', 'status', 'scale', 'log', 'exec', 'attach', 'portforward', 'binding', 'eviction',
  'watch', 'openapi', 'version', 'healthz', 'readyz', 'livez', 'metrics', 'coordination.k8s.io', 'leases', 'events', 'rbac.authorization.k8s.io',
  'roles', 'apiextensions.k8s.io', 'customresourcedefinitions', 'x', '..', '.', '%00', '%2F', '%ff', '%', '~', '*', 'a'.repeat(300), '\u00e9', '\u{1F600}', ''];
const READ_ONLY_ROOTS = ['/api', '/apis', '/openapi/v2', '/openapi/v3', '/version', '/healthz', '/readyz', '/livez', '/metrics', '/.well-known/openid-configuration', '/openid/v1/jwks', '/logs', '/debug/pprof'];
/** Resources a mutating request may name in the sandbox: a ResourceQuota of 0 keeps the workloads from existing. */
const SANDBOX_RESOURCES = [['', 'v1', 'configmaps'], ['', 'v1', 'secrets'], ['', 'v1', 'serviceaccounts'], ['', 'v1', 'events'], ['', 'v1', 'endpoints'],
  ['', 'v1', 'pods'], ['', 'v1', 'services'], ['', 'v1', 'persistentvolumeclaims'], ['apps', 'v1', 'deployments'], ['apps', 'v1', 'statefulsets'], ['batch', 'v1', 'jobs'],
  ['coordination.k8s.io', 'v1', 'leases'], ['rbac.authorization.k8s.io', 'v1', 'roles'], ['events.k8s.io', 'v1', 'events'], ['policy', 'v1', 'poddisruptionbudgets'],
  ['autoscaling', 'v2', 'horizontalpodautoscalers'], ['discovery.k8s.io', 'v1', 'endpointslices'], ['networking.k8s.io', 'v1', 'ingresses'], ['networking.k8s.io', 'v1', 'networkpolicies']] as const;
const SUBRESOURCES = ['', '', '', 'status', 'scale', 'log', 'exec', 'attach', 'portforward', 'binding', 'eviction', 'ephemeralcontainers', 'proxy', 'token', 'x'];
const CONTENT_TYPES = ['application/json', 'application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf', 'application/merge-patch+json',
  'application/json-patch+json', 'application/strategic-merge-patch+json', 'application/apply-patch+yaml', 'application/apply-patch+cbor', 'application/cbor',
  'text/plain', 'multipart/form-data; boundary=x', 'application/x-www-form-urlencoded', 'application/json; charset=utf-16', 'garbage', '', ';;;', 'application/json;q=0.5, */*'];
const ACCEPTS = ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf', 'application/json;as=Table;v=v1;g=meta.k8s.io', 'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io',
  'application/json;stream=watch', '*/*', 'text/html', 'application/cbor', 'garbage;;', ''];
const QUERY_KEYS = ['watch', 'resourceVersion', 'resourceVersionMatch', 'limit', 'continue', 'labelSelector', 'fieldSelector', 'timeoutSeconds', 'allowWatchBookmarks',
  'sendInitialEvents', 'dryRun', 'fieldManager', 'fieldValidation', 'force', 'propagationPolicy', 'gracePeriodSeconds', 'orphanDependents', 'pretty',
  'container', 'follow', 'tailLines', 'sinceSeconds', 'limitBytes', 'command', 'stdin', 'ports', 'includeObject', 'x'];
const HOSTILE_VALUES = ['', '0', '-1', '1', 'true', 'false', 'abc', '99999999999999999999999', '1e400', 'NaN', '-0', '0x10', 'a=b,c!=d', 'a in (b', '!!!',
  'metadata.name=x', 'spec.nodeName==', '%00', '\u0000', 'a'.repeat(5000), 'Exact', 'NotOlderThan', 'All', 'Foreground', 'Strict', '{"a":1}', '[', '${x}'];

const deep = (d: number, open: string, close: string, leaf = '1') => open.repeat(d) + leaf + close.repeat(d);
const bigNumbers = ['1e400', '-1e400', '123456789012345678901234567890', '0.0000000000000000000000001', '-0', '9007199254740993', '1E+308', '4.9e-324'];

/** Kubernetes-shaped objects with hostile values where fields are expected. */
function hostileObject(): fc.Arbitrary<unknown> {
  const val = fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.constantFrom(...bigNumbers.map(Number)), fc.string({ maxLength: 300 }), fc.constant(null), fc.constant('a'.repeat(70_000)));
  return fc.record({
    apiVersion: fc.oneof(fc.constantFrom('v1', 'apps/v1', 'batch/v1', 'x/y', '', 'v1/v1/v1'), val),
    kind: fc.oneof(fc.constantFrom('ConfigMap', 'Pod', 'Deployment', 'Secret', 'Status', 'List', 'DeleteOptions', 'Scale', 'Eviction', 'Binding', ''), val),
    metadata: fc.oneof(val, fc.record({
      name: fc.oneof(fc.string({ maxLength: 300 }), val, fc.constant('a'.repeat(254)), fc.constant('../x'), fc.constant('A_B')),
      namespace: fc.oneof(fc.constant('default'), fc.string({ maxLength: 20 }), val),
      labels: fc.oneof(fc.dictionary(fc.string({ maxLength: 70 }), fc.oneof(fc.string({ maxLength: 70 }), val)), val),
      annotations: fc.oneof(fc.dictionary(fc.string({ maxLength: 30 }), fc.string({ maxLength: 2000 })), val),
      resourceVersion: fc.oneof(fc.constantFrom(...HOSTILE_VALUES), val),
      finalizers: fc.oneof(fc.array(fc.string({ maxLength: 30 })), val),
      ownerReferences: fc.oneof(fc.array(fc.dictionary(fc.string({ maxLength: 10 }), val), { maxLength: 3 }), val),
      generateName: fc.oneof(fc.string({ maxLength: 30 }), val),
      deletionGracePeriodSeconds: val, creationTimestamp: val, uid: val, managedFields: val,
    }, { requiredKeys: [] })),
    data: fc.oneof(fc.dictionary(fc.string({ maxLength: 30 }), fc.oneof(fc.string({ maxLength: 100 }), val)), val),
    spec: fc.oneof(val, fc.record({
      replicas: val, containers: fc.oneof(val, fc.array(fc.dictionary(fc.constantFrom('name', 'image', 'ports', 'resources', 'env', 'command'), val), { maxLength: 3 })),
      selector: val, template: val, ports: val, type: val, clusterIP: val, nodeName: val, schedule: val,
    }, { requiredKeys: [] })),
    status: val,
    items: val,
  }, { requiredKeys: [] });
}

function bodyArb(): fc.Arbitrary<{ type: string; body: Buffer }> {
  const json = (a: fc.Arbitrary<unknown>) => a.map((v) => Buffer.from(JSON.stringify(v) ?? 'null'));
  const text = (a: fc.Arbitrary<string>) => a.map((s) => Buffer.from(s));
  return fc.tuple(fc.constantFrom(...CONTENT_TYPES), fc.oneof(
    json(hostileObject()), json(hostileObject()), json(hostileObject()),
    json(fc.jsonValue({ maxDepth: 5 })),
    json(fc.array(fc.record({ op: fc.constantFrom('add', 'remove', 'replace', 'move', 'copy', 'test', 'x'), path: fc.constantFrom('', '/', '/metadata', '/metadata/name', '/spec/-', '/x/~2', '/data/a', '/metadata/labels/a~1b'), from: fc.string({ maxLength: 10 }), value: fc.jsonValue({ maxDepth: 2 }) }, { requiredKeys: ['op'] }), { maxLength: 5 })),
    fc.integer({ min: 1, max: 20_000 }).map((d) => Buffer.from(deep(d, '[', ']'))),
    fc.integer({ min: 1, max: 20_000 }).map((d) => Buffer.from(deep(d, '{"a":', '}'))),
    fc.integer({ min: 1, max: 20_000 }).map((d) => Buffer.from(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep"},"data":${deep(d, '{"a":', '}', '"x"')}}`)),
    fc.integer({ min: 1, max: 5000 }).map((d) => Buffer.from('a:\n' + Array.from({ length: Math.min(d, 500) }, (_, i) => ' '.repeat(i + 1) + '- ').join('\n') + '1')),
    fc.integer({ min: 1, max: 20_000 }).map((d) => Buffer.from('a: ' + '['.repeat(d) + ']'.repeat(d))),
    fc.constantFrom(...bigNumbers).map((n) => Buffer.from(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"n","generation":${n},"deletionGracePeriodSeconds":${n}},"spec":{"replicas":${n}}}`)),
    text(fc.string({ maxLength: 2000 })),
    fc.uint8Array({ maxLength: 2000 }).map((b) => Buffer.concat([Buffer.from([0x6b, 0x38, 0x73, 0x00]), Buffer.from(b)])),
    fc.uint8Array({ maxLength: 2000 }).map((b) => Buffer.from(b)),
    text(fc.constantFrom('---\n---\n', 'a: &a [*a]', '&a [*a, *a]', '!!binary AAAA', '!!python/object:os.system [ls]', 'a: !!js/function "function(){}"', '? [a]\n: b', 'a: 1\na: 2', '%YAML 1.1\n---\na: b', '\ufeff{"a":1}', '{"a":1}{"b":2}', '{"__proto__":{"polluted":1},"constructor":{"prototype":{"x":1}}}')),
    fc.constant(Buffer.alloc(0)),
  )).map(([type, body]) => ({ type, body }));
}

function pathArb(sandbox: string, mutating: boolean): fc.Arbitrary<string> {
  const seg = fc.oneof(fc.constantFrom(...WORDS), fc.string({ maxLength: 20 }).map(encodeURIComponent), fc.string({ unit: 'binary', maxLength: 10 }).map(encodeURIComponent));
  const query = fc.array(fc.tuple(fc.constantFrom(...QUERY_KEYS), fc.oneof(fc.constantFrom(...HOSTILE_VALUES), fc.string({ maxLength: 50 }))), { maxLength: 5 })
    .map((kv) => (kv.length ? '?' + kv.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&') : ''));
  // Mutations: only inside the sandbox namespace, on the resources the quota keeps empty.
  const inSandbox = fc.tuple(fc.constantFrom(...SANDBOX_RESOURCES), fc.oneof(fc.constant(''), fc.constantFrom('a', 'x', 'fuzz', 'a'.repeat(254), '%00', '..', 'A_B'), fc.string({ maxLength: 20 }).map(encodeURIComponent)), fc.constantFrom(...SUBRESOURCES))
    .map(([[g, v, r], name, sub]) => `${g ? `/apis/${g}/${v}` : `/api/${v}`}/namespaces/${sandbox}/${r}${name ? `/${name}${sub ? `/${sub}` : ''}` : ''}`);
  const sandboxPath = fc.tuple(inSandbox, query).map(([p, q]) => p + q);
  if (mutating) return sandboxPath;
  const random = fc.tuple(fc.constantFrom('', ...READ_ONLY_ROOTS), fc.array(seg, { maxLength: 8 }), query).map(([root, segs, q]) => `${root}/${segs.join('/')}${q}`)
    // No proxying to nodes or services: a 502/503 there would be a backend's answer, not the apiserver's.
    .filter((p) => !/\/proxy(\/|$|\?)/.test(p));
  return fc.oneof(sandboxPath, random, fc.tuple(fc.constantFrom(...READ_ONLY_ROOTS), query).map(([r, q]) => r + q));
}

/** n hostile requests, the same for the same seed. */
export function hostileRequests(n: number, seed: number, sandbox: string): FuzzRequest[] {
  const read = fc.record({ method: fc.constantFrom('GET', 'GET', 'GET', 'HEAD', 'OPTIONS', 'TRACE', 'CONNECT'), path: pathArb(sandbox, false), accept: fc.constantFrom(...ACCEPTS), b: fc.option(bodyArb(), { freq: 4 }) });
  const write = fc.record({ method: fc.constantFrom('POST', 'PUT', 'PATCH', 'DELETE', 'POST', 'PATCH', 'PROPFIND', 'get'), path: pathArb(sandbox, true), accept: fc.constantFrom(...ACCEPTS), b: fc.option(bodyArb(), { freq: 8 }) });
  return fc.sample(fc.oneof(read, write), { numRuns: n, seed }).map((r) => {
    const headers: Record<string, string> = {};
    if (r.accept) headers['accept'] = r.accept;
    // A request that would stream forever (watch, follow) is ended by the server in a second.
    let path = r.path;
    if (/[?&](watch|follow)=/.test(path) || /\/watch\//.test(path)) {
      // The first of repeated parameters counts: the only timeoutSeconds is ours.
      path = path.replace(/([?&])timeoutSeconds=[^&]*/g, '$1x=').concat(`${path.includes('?') ? '&' : '?'}timeoutSeconds=1`);
    }
    // HEAD has no body: bytes after its headers would be read as the next request on the connection.
    if (r.b && r.method !== 'HEAD') { if (r.b.type) headers['content-type'] = r.b.type; return { method: r.method, path, headers, body: r.b.body }; }
    return { method: r.method, path, headers };
  });
}

/** The YAML bombs: billion laughs (nested aliases), an alias loop, and a quadratic alias fan-out. */
export function yamlBombs(sandbox: string): FuzzRequest[] {
  const laughs = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
  for (let i = 1; i < 12; i++) laughs.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9).fill(`*${String.fromCharCode(96 + i)}`).join(',')}]`);
  const billion = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lol\n${laughs.map((l) => `  ${l}`).join('\n').replace(/^ {2}a:/, '  a:')}\ndata:\n  x: "1"\n`;
  const bomb1 = `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lol}\nx:\n${laughs.map((l) => `  ${l}`).join('\n')}\n`;
  const fanout = `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fan, labels: &l {${Array.from({ length: 200 }, (_, i) => `k${i}: v`).join(', ')}}}\nx: [${Array(50_000).fill('*l').join(',')}]\n`;
  const base = `/api/v1/namespaces/${sandbox}/configmaps`;
  const out: FuzzRequest[] = [];
  for (const body of [billion, bomb1, fanout]) {
    for (const [method, path, type] of [['POST', base, 'application/yaml'], ['PUT', `${base}/lol`, 'application/yaml'], ['PATCH', `${base}/lol?fieldManager=f`, 'application/apply-patch+yaml']] as const) {
      out.push({ method, path, headers: { 'content-type': type }, body: Buffer.from(body) });
    }
  }
  return out;
}

/** Bodies over upstream's 3 MiB request limit, each a valid-looking ConfigMap; with and without a Content-Length. */
export function oversized(sandbox: string): FuzzRequest[] {
  const big = (n: number) => Buffer.from(JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'big' }, data: { x: 'a'.repeat(n) } }));
  const base = `/api/v1/namespaces/${sandbox}/configmaps`;
  return [3 * 1024 * 1024 + 1, 4 * 1024 * 1024, 16 * 1024 * 1024].flatMap((n) => [
    { method: 'POST', path: base, headers: { 'content-type': 'application/json' }, body: big(n) },
    { method: 'PUT', path: `${base}/big`, headers: { 'content-type': 'application/yaml' }, body: big(n) },
    { method: 'PATCH', path: `${base}/big`, headers: { 'content-type': 'application/merge-patch+json', 'transfer-encoding': 'chunked' }, body: big(n) },
  ]);
}

export interface Target { url: string; ca?: string; cert?: string; key?: string; token?: string }
export interface Answer { status: number | 'error' | 'timeout'; ms: number; error?: string; bodyStart?: string }

/** Sends requests with at most `concurrency` in flight; each answer in the requests' order. */
export async function sendAll(t: Target, reqs: FuzzRequest[], concurrency: number, timeoutMs = 30_000): Promise<Answer[]> {
  const u = new URL(t.url);
  const https = u.protocol === 'https:';
  const agent = https ? new Agent({ keepAlive: true, maxSockets: concurrency, ...(t.ca ? { ca: t.ca } : {}), ...(t.cert ? { cert: t.cert } : {}), ...(t.key ? { key: t.key } : {}) }) : new HttpAgent({ keepAlive: true, maxSockets: concurrency });
  const out: Answer[] = new Array(reqs.length);
  let next = 0;
  const one = (r: FuzzRequest): Promise<Answer> => new Promise((resolve) => {
    const t0 = Date.now();
    const headers: Record<string, string> = { ...r.headers, ...(t.token ? { authorization: `Bearer ${t.token}` } : {}) };
    if (r.body && !headers['transfer-encoding']) headers['content-length'] = String(r.body.length);
    let req: ReturnType<typeof httpRequest>;
    try {
      req = (https ? httpsRequest : httpRequest)({ host: u.hostname, port: u.port, method: r.method, path: r.path, headers, agent, timeout: timeoutMs }, (res) => {
        let start = '';
        res.on('data', (d: Buffer) => { if (start.length < 300) start += d.toString('utf8', 0, 300); });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: Date.now() - t0, bodyStart: start.slice(0, 300) }));
        res.on('error', () => resolve({ status: res.statusCode ?? 0, ms: Date.now() - t0, bodyStart: start.slice(0, 300) }));
      });
    } catch (err) { resolve({ status: 'error', ms: 0, error: (err as Error).message }); return; }
    // A CONNECT's answer arrives as 'connect' (with the raw socket), not as a response.
    req.on('connect', (res, socket) => { socket.destroy(); resolve({ status: res.statusCode ?? 0, ms: Date.now() - t0 }); });
    req.on('timeout', () => { req.destroy(new Error('timeout')); });
    req.on('error', (err) => resolve({ status: err.message === 'timeout' ? 'timeout' : 'error', ms: Date.now() - t0, error: err.message }));
    if (r.body) req.end(r.body); else req.end();
  });
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < reqs.length) { const i = next++; out[i] = await one(reqs[i]!); }
  }));
  agent.destroy();
  return out;
}
