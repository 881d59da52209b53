/**
 * Resource arithmetic on pods and nodes (framework.Resource, resourcehelper.PodRequests).
 */
import type { Pod, Container, ResourceRequirements } from '@mk8s/api';
import { parseBytes, parseCpuMillis } from '../util/quantity.js';

/** Compute resources: CPU in millicores, memory and storage in bytes, extended resources by name. */
export interface Resource {
  milliCpu: number;
  memory: number;
  ephemeralStorage: number;
  allowedPodNumber: number;
  scalar: Record<string, number>;
}

/** What the scheduler assumes for a container that requests nothing, for scoring only (schedutil). */
export const DEFAULT_MILLI_CPU_REQUEST = 100;
export const DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024;

export const emptyResource = (): Resource => ({ milliCpu: 0, memory: 0, ephemeralStorage: 0, allowedPodNumber: 0, scalar: {} });

export function cloneResource(r: Resource): Resource {
  return { ...r, scalar: { ...r.scalar } };
}

/** Adds a ResourceList (name → quantity) into r. */
export function addResourceList(r: Resource, list: Record<string, string> | undefined): void {
  if (!list) return;
  for (const [name, q] of Object.entries(list)) {
    switch (name) {
      case 'cpu': r.milliCpu += parseCpuMillis(q); break;
      case 'memory': r.memory += parseBytes(q); break;
      case 'pods': r.allowedPodNumber += parseBytes(q); break;
      case 'ephemeral-storage': r.ephemeralStorage += parseBytes(q); break;
      default: if (isScalarResourceName(name)) r.scalar[name] = (r.scalar[name] ?? 0) + parseBytes(q);
    }
  }
}

function maxResourceList(r: Resource, list: Record<string, string> | undefined): void {
  if (!list) return;
  const x = emptyResource();
  addResourceList(x, list);
  r.milliCpu = Math.max(r.milliCpu, x.milliCpu);
  r.memory = Math.max(r.memory, x.memory);
  r.ephemeralStorage = Math.max(r.ephemeralStorage, x.ephemeralStorage);
  for (const [k, v] of Object.entries(x.scalar)) r.scalar[k] = Math.max(r.scalar[k] ?? 0, v);
}

/** Extended (nvidia.com/gpu), hugepages- and attachable-volumes- resources: anything namespaced or prefixed. */
export function isScalarResourceName(name: string): boolean {
  return name.includes('/') || name.startsWith('hugepages-') || name.startsWith('attachable-volumes-');
}

const requestsOf = (c: Container): Record<string, string> | undefined => (c.resources as ResourceRequirements | undefined)?.requests;

/**
 * The pod's effective request: sum over containers (and restartable init containers), maxed with
 * each init container, plus pod overhead (resourcehelper.PodRequests).
 */
export function podRequests(pod: Pod): Resource {
  const r = emptyResource();
  for (const c of pod.spec?.containers ?? []) addResourceList(r, requestsOf(c));
  const sidecars = emptyResource();
  for (const c of pod.spec?.initContainers ?? []) {
    if (c.restartPolicy === 'Always') {
      addResourceList(r, requestsOf(c));
      addResourceList(sidecars, requestsOf(c));
      continue;
    }
    // An init container runs next to the sidecars started before it.
    const x = cloneResource(sidecars);
    addResourceList(x, requestsOf(c));
    maxResourceList(r, toList(x));
  }
  addResourceList(r, pod.spec?.overhead);
  return r;
}

/** CPU and memory requests with the non-zero defaults applied per container (for scoring). */
function nonZeroOf(c: Container): { cpu: number; mem: number } {
  const req = requestsOf(c);
  return {
    cpu: req?.['cpu'] !== undefined ? parseCpuMillis(req['cpu']) : DEFAULT_MILLI_CPU_REQUEST,
    mem: req?.['memory'] !== undefined ? parseBytes(req['memory']) : DEFAULT_MEMORY_REQUEST,
  };
}

export function podNonZeroRequests(pod: Pod): { milliCpu: number; memory: number } {
  let milliCpu = 0; let memory = 0;
  const one = nonZeroOf;
  for (const c of pod.spec?.containers ?? []) { const x = one(c); milliCpu += x.cpu; memory += x.mem; }
  for (const c of pod.spec?.initContainers ?? []) {
    const x = one(c);
    if (c.restartPolicy === 'Always') { milliCpu += x.cpu; memory += x.mem; continue; }
    milliCpu = Math.max(milliCpu, x.cpu); memory = Math.max(memory, x.mem);
  }
  const oh = pod.spec?.overhead;
  if (oh?.['cpu']) milliCpu += parseCpuMillis(oh['cpu']);
  if (oh?.['memory']) memory += parseBytes(oh['memory']);
  return { milliCpu, memory };
}

function toList(r: Resource): Record<string, string> {
  const l: Record<string, string> = { cpu: `${r.milliCpu}m`, memory: String(r.memory), 'ephemeral-storage': String(r.ephemeralStorage) };
  for (const [k, v] of Object.entries(r.scalar)) l[k] = String(v);
  return l;
}
