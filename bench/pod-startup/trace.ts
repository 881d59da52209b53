/**
 * The timeline of ONE pod from create to Running, step by step, next to the raw Docker calls the
 * same pod needs. The kubelet runs in this process against the real cri-docker shim (a throwaway
 * netns, real dockerd) and a real apiserver with ServiceAccount admission and TokenRequest, so
 * the pod carries the kube-api-access projected volume as in a cluster. Every CRI call and every
 * API call the kubelet makes is timed (start and end, ms after the create was sent), and a watch
 * stamps when the Running status reaches a client.
 *
 * Run: node --conditions=@mk8s/source --import tsx bench/pod-startup/trace.ts   (root, dockerd)
 * TRACE_PODS=N (default 3): pods traced one after the other (after a warm-up pod).
 * TRACE_CNI=mk8s: the cluster's network (mk8s-bridge in the shim's process, as `cluster up` sets it
 * up) instead of the test shim's default (Debian's bridge + host-local binaries).
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { writeConflist } from '@mk8s/cni';
import Docker from 'dockerode';
import { startTestApiServer } from '@mk8s/apiserver/testing';
import { ServiceAccountTokenIssuer } from '@mk8s/apiserver';
import { startTestShim, ensureImages } from '@mk8s/cri-docker/testing';
import { createClientset, type Clientset } from '@mk8s/client';
import { ConfigMaps, Pods, ServiceAccounts, type KubeObject, type Pod } from '@mk8s/api';
import { realClock, silentLogger } from '@mk8s/component-base';
import type { ImageService, RuntimeService } from '@mk8s/proto';
import { createKubelet } from '@mk8s/kubelet';

type PodObj = Pod & KubeObject;
let t0 = 0;
let marks: { what: string; start: number; end?: number }[] = [];
const now = () => performance.now() - t0;

/** Wraps every method of obj so each call leaves a mark (name, start, end). */
function traced<T extends object>(obj: T, prefix: string, skip: (name: string, args: unknown[]) => boolean = () => false): T {
  return new Proxy(obj, {
    get(target, prop, recv) {
      const v = Reflect.get(target, prop, recv) as unknown;
      if (typeof v !== 'function' || typeof prop !== 'string') return v;
      return (...args: unknown[]) => {
        const r = (v as (...a: unknown[]) => unknown).apply(target, args);
        if (skip(prop, args) || !(r instanceof Promise)) return r;
        const m: { what: string; start: number; end?: number } = { what: `${prefix}${prop}${describe(prop, args)}`, start: now() };
        marks.push(m);
        return r.finally(() => { m.end = now(); });
      };
    },
  });
}
const describe = (prop: string, args: unknown[]): string => {
  if (prop === 'get' || prop === 'delete' || prop === 'patch' || prop === 'createSubresource') return ` ${String(args[0])}${prop === 'patch' ? ' status' : prop === 'createSubresource' ? `/${String(args[1])}` : ''}`;
  return '';
};

function tracedClient(c: Clientset): Clientset {
  return {
    resource: (r, ns) => traced(c.resource(r, ns), `api ${r.resource}.`, (name) => name === 'watch' || name === 'list'),
  };
}

async function rawDocker(docker: Docker, image: string): Promise<{ what: string; ms: number }[]> {
  const out: { what: string; ms: number }[] = [];
  const t = async <T>(what: string, f: () => Promise<T>): Promise<T> => { const s = performance.now(); const r = await f(); out.push({ what, ms: performance.now() - s }); return r; };
  const tag = `mk8s-trace-${Date.now().toString(36)}`;
  const pause = await t('create pause', () => docker.createContainer({ name: `${tag}-pause`, Image: 'mk8s/pause:3.9', Labels: { 'mk8s-bench': 'trace' }, HostConfig: { NetworkMode: 'none', IpcMode: 'shareable' } }));
  await t('start pause', () => pause.start());
  await t('inspect pause', () => pause.inspect());
  await t('image inspect', () => docker.getImage(image).inspect());
  const app = await t('create app', () => docker.createContainer({ name: `${tag}-app`, Image: image, Cmd: ['sleep', '3600'], Labels: { 'mk8s-bench': 'trace' }, HostConfig: { NetworkMode: `container:${pause.id}`, IpcMode: `container:${pause.id}` } }));
  await t('start app', () => app.start());
  await t('inspect app', () => app.inspect());
  await Promise.all([app.remove({ force: true }), pause.remove({ force: true })].map((p) => p.catch(() => undefined)));
  return out;
}

async function main(): Promise<void> {
  ensureImages();
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const api = await startTestApiServer({
    enableAdmissionPlugins: ['ServiceAccount'],
    serviceAccountTokenIssuer: new ServiceAccountTokenIssuer({ privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string, clock: realClock }),
  });
  const mk8sCni = process.env['TRACE_CNI'] === 'mk8s';
  const shim = await startTestShim(mk8sCni ? { extraArgs: ['--cni-bin-dir', `${join(import.meta.dirname, '..', '..', 'cni', 'bin')}:/usr/lib/cni`] } : {});
  if (mk8sCni) await writeConflist(join(dirname(shim.socketPath), 'net.d'), { podCidr: shim.podCidr, dataDir: join(dirname(shim.socketPath), 'mk8s-ipam') });
  const rootDir = mkdtempSync(join(tmpdir(), 'mk8s-trace-'));
  const ac = new AbortController();
  let running: Promise<void> | undefined;
  try {
    const client = createClientset({ server: api.url, userAgent: 'trace-kubelet', qps: 0 });
    const bench = createClientset({ server: api.url, userAgent: 'trace-bench', qps: 0 });
    await bench.resource(ServiceAccounts, 'default').create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } } as KubeObject).catch(() => undefined);
    await bench.resource(ConfigMaps, 'default').create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kube-root-ca.crt' }, data: { 'ca.crt': 'x' } } as KubeObject).catch(() => undefined);
    const runtime = traced<RuntimeService>(shim.runtime, 'cri ', (name) => name === 'listContainers' || name === 'listPodSandbox' || name === 'status' || name === 'version');
    const images = traced<ImageService>(shim.images, 'cri ');
    const kubelet = createKubelet({
      nodeName: shim.nodeName, nodeIP: '127.0.0.1', rootDir, client: tracedClient(client), runtime, images,
      logger: silentLogger(), port: -1, registerNode: false,
    });
    running = kubelet.run(ac.signal);
    await kubelet.ready;
    const pods = bench.resource<PodObj>(Pods, 'default');
    const n = Number(process.env['TRACE_PODS'] ?? 3);
    for (let i = -1; i < n; i++) {
      const name = `trace-${i < 0 ? 'warm' : i}`;
      marks = [];
      const seen = new Map<string, number>();
      const w = pods.watch({ fieldSelector: `metadata.name=${name}` });
      const watching = (async () => {
        for await (const ev of w) {
          const p = ev.object as PodObj;
          const key = `watch: phase ${p.status?.phase ?? '-'}${p.status?.containerStatuses?.[0]?.state?.running ? ' (container running)' : ''}${p.status?.podIP ? ' ip' : ''}`;
          if (!seen.has(key)) seen.set(key, now());
          if (p.status?.phase === 'Running' && p.status.containerStatuses?.every((c) => c.state?.running)) break;
        }
      })();
      await new Promise((r) => setTimeout(r, 300));
      t0 = performance.now();
      const m = { what: 'bench create pod', start: 0 } as { what: string; start: number; end?: number };
      marks.push(m);
      await pods.create({
        apiVersion: 'v1', kind: 'Pod', metadata: { name },
        spec: { nodeName: shim.nodeName, terminationGracePeriodSeconds: 0, containers: [{ name: 'c', image: 'busybox:latest', imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'] }] },
      } as PodObj);
      m.end = now();
      await watching;
      const total = now();
      if (i >= 0) {
        console.log(`\n${name}: create → Running seen by a watch ${total.toFixed(0)} ms`);
        const rows = [...marks.map((x) => ({ at: x.start, line: `${x.start.toFixed(1).padStart(8)} ${(x.end !== undefined ? x.end.toFixed(1) : '?').padStart(8)} ${(x.end !== undefined ? (x.end - x.start).toFixed(1) : '?').padStart(7)}  ${x.what}` })),
          ...[...seen].map(([k, at]) => ({ at, line: `${at.toFixed(1).padStart(8)} ${''.padStart(8)} ${''.padStart(7)}  ${k}` }))].sort((a, b) => a.at - b.at);
        console.log(`${'start'.padStart(8)} ${'end'.padStart(8)} ${'ms'.padStart(7)}  step`);
        for (const r of rows) console.log(r.line);
        const sb = shim.log().split('\n').filter((l) => l.includes('Started pod sandbox') && l.includes(`/${name}"`)).pop();
        if (sb) { const j = JSON.parse(sb) as Record<string, unknown>; console.log(`shim RunPodSandbox: docker create ${String(j['createMs'])}, start ${String(j['startMs'])}, inspect ${String(j['inspectMs'])}, CNI ADD ${String(j['cniMs'])} ms`); }
        const raw = await rawDocker(shim.docker, 'busybox:latest');
        console.log(`raw docker (dockerode, same process): ${raw.map((x) => `${x.what} ${x.ms.toFixed(0)}`).join(', ')}; total ${raw.reduce((a, x) => a + x.ms, 0).toFixed(0)} ms`);
      }
      await pods.delete(name, { gracePeriodSeconds: 0 }).catch(() => undefined);
      for (const deadline = Date.now() + 30_000; Date.now() < deadline;) {
        if (!(await pods.get(name).then(() => true, () => false))) break;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  } finally {
    ac.abort();
    await running?.catch(() => undefined);
    await shim.teardown();
    await api.stop();
    rmSync(rootDir, { recursive: true, force: true });
  }
}

main().then(() => process.exit(0), (err: unknown) => { console.error(err); process.exit(1); });
