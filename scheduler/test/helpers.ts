/** Shared helpers for the scheduler's integration tests: nodes and pods through the real API. */
import { Namespaces, Nodes, Pods, type Event, type KubeObject } from '@mk8s/api';
import type { Clientset } from '@mk8s/client';
import { Events } from '@mk8s/api';
import { makeNode, makePod, type NodeOptions, type PodOptions } from '../src/testing/wrappers.js';
import type { Pod } from '../src/framework/types.js';

export async function waitFor<T>(what: string, fn: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false) return v as T;
    } catch (err) { last = err; }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export function api(client: Clientset, ns: string) {
  const pods = client.resource(Pods, ns);
  const nodes = client.resource(Nodes);
  return {
    async namespace() { await client.resource(Namespaces).create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }); },
    async node(name: string, o: NodeOptions = {}) { await nodes.create(makeNode(name, o) as unknown as KubeObject); },
    async deleteNode(name: string) { await nodes.delete(name).catch(() => undefined); },
    async pod(name: string, o: PodOptions = {}) {
      const p = makePod(name, { ...o, namespace: ns });
      delete (p as { status?: unknown }).status;
      delete (p.metadata as { uid?: string }).uid;
      await pods.create(p as unknown as KubeObject);
    },
    async get(name: string): Promise<Pod> { return (await pods.get(name)) as unknown as Pod; },
    async nodeOf(name: string): Promise<string | undefined> { return (await this.get(name)).spec?.nodeName; },
    async boundTo(name: string): Promise<string> { return waitFor(`pod ${ns}/${name} to be bound`, () => this.nodeOf(name)); },
    async events(name: string, reason: string): Promise<Event[]> {
      const list = await client.resource(Events, ns).list();
      return (list.items as unknown as Event[]).filter((e) => e.involvedObject.name === name && e.reason === reason);
    },
    async forceDelete(name: string) { await pods.delete(name, { gracePeriodSeconds: 0 }).catch(() => undefined); },
    async cleanup(nodeNames: string[]) {
      for (const p of (await pods.list()).items) await pods.delete(p.metadata.name, { gracePeriodSeconds: 0 }).catch(() => undefined);
      for (const n of nodeNames) await this.deleteNode(n);
    },
  };
}
