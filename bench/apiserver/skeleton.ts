/**
 * The least an apiserver on this stack does per create, as a second floor for bench/apiserver
 * (`BENCH_AB_MAIN=bench/apiserver/skeleton.ts`): node:http, the JSON body parsed, uid and
 * creationTimestamp stamped, one create-if-absent txn through the apiserver's own etcd client
 * (@grpc/grpc-js) of a value the size the apiserver stores (its defaults for this pod shape, merged
 * as constants, not computed), the stored JSON answered with its resourceVersion, and one etcd watch on the
 * pods prefix whose events are decoded and dropped (the watch cache's feed, without the cache).
 * No routing, decoding by media type, defaults, admission, validation, metrics or cache: whatever
 * the real apiserver spends above this is its own layers. Takes the apiserver's --etcd-servers and
 * --port; ignores its other flags.
 */
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { EtcdKvClient } from '@mk8s/apiserver';

// What the apiserver's defaults and admission add to the bench's pod, so etcd and gRPC carry the same bytes.
const CONTAINER_DEFAULTS = { imagePullPolicy: 'IfNotPresent', terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File' };
const SPEC_DEFAULTS = {
  dnsPolicy: 'ClusterFirst', restartPolicy: 'Always', securityContext: {}, terminationGracePeriodSeconds: 30, schedulerName: 'default-scheduler',
  enableServiceLinks: true, serviceAccountName: 'default', serviceAccount: 'default', priority: 0, preemptionPolicy: 'PreemptLowerPriority',
  tolerations: [
    { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
    { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
  ],
};
type Pod = { metadata: { name: string; namespace?: string; uid?: string; creationTimestamp?: string; generation?: number }; spec: { containers: object[] }; status?: object };

const { values } = parseArgs({ args: process.argv.slice(2), options: { 'etcd-servers': { type: 'string' }, port: { type: 'string' } }, strict: false });
const kv = new EtcdKvClient({ endpoints: String(values['etcd-servers']).split(',') });
const prefix = Buffer.from('/registry/pods/');
const watch = kv.watch();
watch.on('data', () => {});
watch.on('error', (err) => { console.error(`skeleton: watch failed: ${err.message}`); process.exit(1); });
watch.write({ create: { key: prefix, rangeEnd: Buffer.from('/registry/pods0'), prevKv: true } });

createServer((req, res) => {
  if (req.method === 'GET') { res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'); return; }
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    let obj: Pod;
    try {
      obj = JSON.parse(Buffer.concat(chunks).toString()) as Pod;
      if (!Array.isArray(obj.spec?.containers)) throw new Error('not a pod');
    } catch (err) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end(`skeleton: pods only: ${(err as Error).message}`);
      return;
    }
    const ns = /^\/api\/v1\/namespaces\/([^/]+)\//.exec(req.url ?? '')?.[1] ?? 'default';
    obj.metadata.namespace = ns;
    obj.metadata.uid = randomUUID();
    obj.metadata.creationTimestamp = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    obj.metadata.generation = 1;
    obj.spec = { ...obj.spec, containers: obj.spec.containers.map((c) => ({ ...c, ...CONTAINER_DEFAULTS })), ...SPEC_DEFAULTS };
    obj.status = { phase: 'Pending', qosClass: 'BestEffort' };
    const json = JSON.stringify(obj);
    const key = Buffer.from(`/registry/pods/${ns}/${obj.metadata.name}`);
    kv.txn({ compare: [{ key, target: 'Mod', result: 'Equal', operand: 0 }], success: [{ put: { key, value: Buffer.from(json) } }], failure: [] })
      .then((r) => {
        if (!r.succeeded) { res.writeHead(409, { 'content-type': 'application/json' }).end('{"kind":"Status","code":409}'); return; }
        res.writeHead(201, { 'content-type': 'application/json' }).end(`${json.slice(0, -1)},"resourceVersion":"${r.revision}"}`);
      })
      .catch((err: Error) => { res.writeHead(500, { 'content-type': 'text/plain' }).end(err.message); });
  });
}).listen(Number(values['port']), '127.0.0.1');
process.on('SIGTERM', () => { kv.close(); process.exit(0); });
