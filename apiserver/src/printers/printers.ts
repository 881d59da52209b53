/**
 * Column sets and row functions, one per kind, after upstream's
 * pkg/printers/internalversion/printers.go. The apiserver always prints "wide" (kubectl hides
 * priority > 0 columns itself unless `-o wide`), so rows carry every column.
 */
import type {
  ConfigMap, Deployment, EndpointSlice, Endpoints, Event, KubeObject, Lease, Namespace, Node, Pod,
  PriorityClass, ReplicaSet, ResourceDescriptor, Secret, Service, ServiceAccount, Container,
} from '@mk8s/api';
import type { TableRowCondition } from './table.js';
import { translateTimestampSince } from '@mk8s/api';
import {
  AGE, CONTAINERS, IMAGES, NAME, age, col, containerCells, define, formatLabels, selectorText, wide, type Printer,
} from './printer-kit.js';
import { WORKLOAD_PRINTERS } from './workload-printers.js';
import { STORAGE_PRINTERS } from './storage-printers.js';
import { ADMIN_PRINTERS } from './admin-printers.js';
import { AUTOSCALING_PRINTERS } from './autoscaling-printers.js';
import { eventsV1ToCore } from '../registry/events/conversion.js';

export { formatLabels, type Printer };

// ---- pods ------------------------------------------------------------------------------------

const POD_SUCCEEDED: TableRowCondition[] = [{ type: 'Completed', status: 'True', reason: 'Succeeded', message: 'The pod has completed successfully.' }];
const POD_FAILED: TableRowCondition[] = [{ type: 'Completed', status: 'True', reason: 'Failed', message: 'The pod failed.' }];
/** The reason the node lifecycle controller sets on pods of an unreachable node. */
const NODE_UNREACHABLE_POD_REASON = 'NodeLost';

const isRestartableInit = (c: Container | undefined): boolean => c?.restartPolicy === 'Always';
const timeOf = (ts: string | undefined): number => (ts ? Date.parse(ts) || 0 : 0);

/** printPod: READY, STATUS (the reason kubectl shows), RESTARTS with "(5m ago)", and the wide columns. */
export function podRow(pod: Pod, name: string, now: number): { cells: unknown[]; conditions?: TableRowCondition[] } {
  const spec = pod.spec ?? { containers: [] };
  const status = pod.status ?? {};
  let restarts = 0;
  let restartableInitRestarts = 0;
  let totalContainers = (spec.containers ?? []).length;
  let readyContainers = 0;
  let lastRestart = 0;
  let lastRestartableInitRestart = 0;
  const phase = status.phase ?? '';
  let reason: string = status.reason || phase;
  for (const c of status.conditions ?? []) {
    if (c.type === 'PodScheduled' && c.reason === 'SchedulingGated') reason = 'SchedulingGated';
  }
  const conditions = phase === 'Succeeded' ? POD_SUCCEEDED : phase === 'Failed' ? POD_FAILED : undefined;

  const initContainers = new Map<string, Container>();
  for (const c of spec.initContainers ?? []) {
    initContainers.set(c.name, c);
    if (isRestartableInit(c)) totalContainers++;
  }

  let initializing = false;
  const initStatuses = status.initContainerStatuses ?? [];
  for (let i = 0; i < initStatuses.length; i++) {
    const c = initStatuses[i]!;
    restarts += c.restartCount ?? 0;
    const lastTerm = timeOf(c.lastState?.terminated?.finishedAt);
    if (lastTerm > lastRestart) lastRestart = lastTerm;
    const restartable = isRestartableInit(initContainers.get(c.name));
    if (restartable) {
      restartableInitRestarts += c.restartCount ?? 0;
      if (lastTerm > lastRestartableInitRestart) lastRestartableInitRestart = lastTerm;
    }
    const term = c.state?.terminated;
    const waiting = c.state?.waiting;
    if (term && term.exitCode === 0) continue;
    if (restartable && c.started) { if (c.ready) readyContainers++; continue; }
    if (term) {
      reason = term.reason ? `Init:${term.reason}` : term.signal ? `Init:Signal:${term.signal}` : `Init:ExitCode:${term.exitCode}`;
    } else if (waiting?.reason && waiting.reason !== 'PodInitializing') {
      reason = `Init:${waiting.reason}`;
    } else {
      reason = `Init:${i}/${(spec.initContainers ?? []).length}`;
    }
    initializing = true;
    break;
  }

  const initialized = (status.conditions ?? []).some((c) => c.type === 'Initialized' && c.status === 'True');
  if (!initializing || initialized) {
    restarts = restartableInitRestarts;
    lastRestart = lastRestartableInitRestart;
    let hasRunning = false;
    const statuses = status.containerStatuses ?? [];
    for (let i = statuses.length - 1; i >= 0; i--) {
      const c = statuses[i]!;
      restarts += c.restartCount ?? 0;
      const lastTerm = timeOf(c.lastState?.terminated?.finishedAt);
      if (lastTerm > lastRestart) lastRestart = lastTerm;
      const term = c.state?.terminated;
      if (c.state?.waiting?.reason) reason = c.state.waiting.reason;
      else if (term?.reason) reason = term.reason;
      else if (term) reason = term.signal ? `Signal:${term.signal}` : `ExitCode:${term.exitCode}`;
      else if (c.ready && c.state?.running) { hasRunning = true; readyContainers++; }
    }
    // A completed container next to a running one: the pod is still running.
    if (reason === 'Completed' && hasRunning) {
      reason = (status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True') ? 'Running' : 'NotReady';
    }
  }

  if (pod.metadata?.deletionTimestamp && status.reason === NODE_UNREACHABLE_POD_REASON) reason = 'Unknown';
  else if (pod.metadata?.deletionTimestamp && phase !== 'Succeeded' && phase !== 'Failed') reason = 'Terminating';

  const restartsText = restarts !== 0 && lastRestart !== 0
    ? `${restarts} (${translateTimestampSince(new Date(lastRestart).toISOString(), now)} ago)`
    : String(restarts);

  const podIP = status.podIPs?.[0]?.ip || '<none>';
  const nodeName = spec.nodeName || '<none>';
  const nominated = status.nominatedNodeName || '<none>';
  let readinessGates = '<none>';
  const gates = spec.readinessGates ?? [];
  if (gates.length > 0) {
    let trueConditions = 0;
    for (const g of gates) {
      const c = (status.conditions ?? []).find((x) => x.type === g.conditionType);
      if (c?.status === 'True') trueConditions++;
    }
    readinessGates = `${trueConditions}/${gates.length}`;
  }
  const cells = [name, `${readyContainers}/${totalContainers}`, reason, restartsText,
    translateTimestampSince(pod.metadata?.creationTimestamp, now), podIP, nodeName, nominated, readinessGates];
  return conditions ? { cells, conditions } : { cells };
}

const podPrinter = define<Pod>([
  NAME,
  col('Ready', 'string', 'The aggregate readiness state of this pod for accepting traffic.'),
  col('Status', 'string', 'The aggregate status of the containers in this pod.'),
  col('Restarts', 'string', 'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.'),
  AGE,
  wide(col('IP', 'string', 'podIP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.')),
  wide(col('Node', 'string', 'NodeName indicates in which node this pod is scheduled.')),
  wide(col('Nominated Node', 'string', 'nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful termination periods.')),
  wide(col('Readiness Gates', 'string', 'If specified, all readiness gates will be evaluated for pod readiness.')),
], (pod, meta, now) => podRow(pod, meta.metadata.name, now));

// ---- workloads -------------------------------------------------------------------------------

const deploymentPrinter = define<Deployment>([
  NAME,
  col('Ready', 'string', 'Number of the pod with ready state'),
  col('Up-to-date', 'string', 'Total number of non-terminated pods targeted by this deployment that have the desired template spec.'),
  col('Available', 'string', 'Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.'),
  AGE, CONTAINERS, IMAGES,
  wide(col('Selector', 'string', 'Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment.')),
], (d, meta, now) => {
  const s = d.status ?? {};
  return [meta.metadata.name, `${s.readyReplicas ?? 0}/${d.spec?.replicas ?? 1}`, s.updatedReplicas ?? 0, s.availableReplicas ?? 0,
    age(meta, now), ...containerCells(d.spec?.template?.spec?.containers), selectorText(d.spec?.selector)];
});

const replicaSetPrinter = define<ReplicaSet>([
  NAME,
  col('Desired', 'integer', 'Replicas is the number of desired replicas.'),
  col('Current', 'integer', 'Replicas is the most recently observed number of replicas.'),
  col('Ready', 'integer', 'The number of ready replicas for this replica set.'),
  AGE, CONTAINERS, IMAGES,
  wide(col('Selector', 'string', 'Selector is a label query over pods that should match the replica count.')),
], (rs, meta, now) => [meta.metadata.name, rs.spec?.replicas ?? 1, rs.status?.replicas ?? 0, rs.status?.readyReplicas ?? 0,
  age(meta, now), ...containerCells(rs.spec?.template?.spec?.containers), selectorText(rs.spec?.selector)]);

// ---- core ------------------------------------------------------------------------------------

function serviceExternalIP(svc: Service): string {
  const type = svc.spec?.type ?? 'ClusterIP';
  const externalIPs = svc.spec?.externalIPs ?? [];
  switch (type) {
    case 'ClusterIP':
    case 'NodePort':
      return externalIPs.length ? externalIPs.join(',') : '<none>';
    case 'LoadBalancer': {
      const lb = (svc.status?.loadBalancer?.ingress ?? []).map((i) => i.ip || i.hostname || '').filter((x) => x !== '');
      if (externalIPs.length) return [...lb, ...externalIPs].join(',');
      return lb.length ? lb.join(',') : '<pending>';
    }
    case 'ExternalName':
      return svc.spec?.externalName ?? '';
    default:
      return '<unknown>';
  }
}

const servicePrinter = define<Service>([
  NAME,
  col('Type', 'string', 'type determines how the Service is exposed.'),
  col('Cluster-IP', 'string', 'clusterIP is the IP address of the service and is usually assigned randomly.'),
  col('External-IP', 'string', 'externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.'),
  col('Port(s)', 'string', 'The list of ports that are exposed by this service.'),
  AGE,
  wide(col('Selector', 'string', 'Route service traffic to pods with label keys and values matching this selector.')),
], (svc, meta, now) => {
  const ports = (svc.spec?.ports ?? []).map((p) =>
    p.nodePort && p.nodePort > 0 ? `${p.port}:${p.nodePort}/${p.protocol ?? 'TCP'}` : `${p.port}/${p.protocol ?? 'TCP'}`).join(',');
  const clusterIP = svc.spec?.clusterIPs?.[0] ?? svc.spec?.clusterIP ?? '<none>';
  return [meta.metadata.name, svc.spec?.type ?? 'ClusterIP', clusterIP || '<none>', serviceExternalIP(svc), ports || '<none>',
    age(meta, now), formatLabels(svc.spec?.selector)];
});

const joinHostPort = (ip: string, port: number): string => (ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`);

/** formatEndpoints: up to 3 `ip:port`, then "+ N more...". */
export function formatEndpoints(ep: Endpoints): string {
  const subsets = ep.subsets ?? [];
  if (subsets.length === 0) return '<none>';
  const MAX = 3;
  const list: string[] = [];
  let more = false;
  let count = 0;
  for (const ss of subsets) {
    const addrs = ss.addresses ?? [];
    if (!ss.ports?.length) {
      count += addrs.length;
      for (const a of addrs) { if (list.length === MAX) { more = true; break; } list.push(a.ip); }
      continue;
    }
    for (const port of ss.ports) {
      count += addrs.length;
      for (const a of addrs) { if (list.length === MAX) { more = true; break; } list.push(joinHostPort(a.ip, port.port)); }
    }
  }
  const ret = list.join(',');
  if (more) return `${ret} + ${count - MAX} more...`;
  return ret || '<none>';
}

const endpointsPrinter = define<Endpoints>([
  NAME,
  col('Endpoints', 'string', 'The set of all endpoints is the union of all subsets.'),
  AGE,
], (ep, meta, now) => [meta.metadata.name, formatEndpoints(ep), age(meta, now)]);

const NODE_ROLE_PREFIX = 'node-role.kubernetes.io/';

function nodeRoles(node: Node): string {
  const roles = new Set<string>();
  for (const [k, v] of Object.entries(node.metadata?.labels ?? {})) {
    if (k.startsWith(NODE_ROLE_PREFIX)) { const r = k.slice(NODE_ROLE_PREFIX.length); if (r) roles.add(r); }
    else if (k === 'kubernetes.io/role' && v !== '') roles.add(v);
  }
  return [...roles].sort().join(',') || '<none>';
}

const nodeAddress = (node: Node, type: string): string => node.status?.addresses?.find((a) => a.type === type)?.address ?? '<none>';

const nodePrinter = define<Node>([
  NAME,
  col('Status', 'string', 'The status of the node'),
  col('Roles', 'string', 'The roles of the node'),
  AGE,
  col('Version', 'string', 'Kubelet Version reported by the node.'),
  wide(col('Internal-IP', 'string', 'List of addresses reachable to the node.')),
  wide(col('External-IP', 'string', 'List of addresses reachable to the node.')),
  wide(col('OS-Image', 'string', 'OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).')),
  wide(col('Kernel-Version', 'string', "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).")),
  wide(col('Container-Runtime', 'string', 'ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).')),
], (node, meta, now) => {
  const status: string[] = [];
  const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
  if (ready) status.push(ready.status === 'True' ? 'Ready' : 'NotReady');
  if (status.length === 0) status.push('Unknown');
  if (node.spec?.unschedulable) status.push('SchedulingDisabled');
  const info = node.status?.nodeInfo;
  return [meta.metadata.name, status.join(','), nodeRoles(node), age(meta, now), info?.kubeletVersion ?? '',
    nodeAddress(node, 'InternalIP'), nodeAddress(node, 'ExternalIP'),
    info?.osImage || '<unknown>', info?.kernelVersion || '<unknown>', info?.containerRuntimeVersion || '<unknown>'];
});

const namespacePrinter = define<Namespace>([
  NAME, col('Status', 'string', 'The status of the namespace'), AGE,
], (ns, meta, now) => [meta.metadata.name, ns.status?.phase ?? '', age(meta, now)]);

const configMapPrinter = define<ConfigMap>([
  NAME, col('Data', 'string', 'Data contains the configuration data.'), AGE,
], (cm, meta, now) => [meta.metadata.name, Object.keys(cm.data ?? {}).length + Object.keys(cm.binaryData ?? {}).length, age(meta, now)]);

const secretPrinter = define<Secret>([
  NAME,
  col('Type', 'string', 'Used to facilitate programmatic handling of secret data.'),
  col('Data', 'string', 'Data contains the secret data.'),
  AGE,
], (s, meta, now) => [meta.metadata.name, s.type ?? '', Object.keys(s.data ?? {}).length, age(meta, now)]);

const serviceAccountPrinter = define<ServiceAccount>([
  NAME, col('Secrets', 'string', 'Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use.'), AGE,
], (sa, meta, now) => [meta.metadata.name, (sa.secrets ?? []).length, age(meta, now)]);

const firstNonEmpty = (...xs: (string | undefined)[]): string => xs.find((x) => x) ?? '';

const eventPrinter = define<Event>([
  col('Last Seen', 'string', 'The time at which the most recent occurrence of this event was recorded.'),
  col('Type', 'string', 'Type of this event (Normal, Warning), new types could be added in the future'),
  col('Reason', 'string', "This should be a short, machine understandable string that gives the reason for the transition into the object's current status."),
  col('Object', 'string', 'The object that this event is about.'),
  wide(col('Subobject', 'string', 'If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2].')),
  wide(col('Source', 'string', 'The component reporting this event. Should be a short machine understandable string.')),
  col('Message', 'string', 'A human-readable description of the status of this operation.'),
  wide(col('First Seen', 'string', 'The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)')),
  wide(col('Count', 'string', 'The number of times this event has occurred.')),
  wide({ ...NAME }),
], (ev, meta, now) => {
  const first = ev.firstTimestamp ? translateTimestampSince(ev.firstTimestamp, now) : translateTimestampSince(ev.eventTime, now);
  let last = ev.lastTimestamp ? translateTimestampSince(ev.lastTimestamp, now) : first;
  let count = ev.count ?? 0;
  if (ev.series) { last = translateTimestampSince(ev.series.lastObservedTime, now); count = ev.series.count ?? 0; }
  else if (count === 0) count = 1;
  const io = ev.involvedObject ?? {};
  const kind = (io.kind ?? '').toLowerCase();
  const target = io.name ? `${kind}/${io.name}` : kind;
  const component = firstNonEmpty(ev.source?.component, ev.reportingComponent);
  const instance = firstNonEmpty(ev.source?.host, ev.reportingInstance);
  const source = instance ? `${component}, ${instance}` : component;
  return [last, ev.type ?? '', ev.reason ?? '', target, io.fieldPath ?? '', source, (ev.message ?? '').trim(), first, count, meta.metadata.name];
});

const leasePrinter = define<Lease>([
  NAME, col('Holder', 'string', 'holderIdentity contains the identity of the holder of a current lease.'), AGE,
], (l, meta, now) => [meta.metadata.name, l.spec?.holderIdentity ?? '', age(meta, now)]);

function listWithMore(list: string[], more: boolean, count: number, max: number): string {
  const ret = list.join(',');
  if (more) return `${ret} + ${count - max} more...`;
  return ret || '<unset>';
}

const endpointSlicePrinter = define<EndpointSlice>([
  NAME,
  col('AddressType', 'string', 'addressType specifies the type of address carried by this EndpointSlice.'),
  col('Ports', 'string', 'ports specifies the list of network ports exposed by each endpoint in this slice.'),
  col('Endpoints', 'string', 'endpoints is a list of unique endpoints in this slice.'),
  AGE,
], (es, meta, now) => {
  const MAX = 3;
  const ports: string[] = []; let portsMore = false; let portCount = 0;
  for (const p of es.ports ?? []) {
    if (ports.length < MAX) ports.push(p.port !== undefined && p.port !== null ? String(p.port) : p.name ?? '*');
    else portsMore = true;
    portCount++;
  }
  const addrs: string[] = []; let addrMore = false; let addrCount = 0;
  for (const e of es.endpoints ?? []) {
    for (const a of e.addresses ?? []) {
      if (addrs.length < MAX) addrs.push(a); else addrMore = true;
      addrCount++;
    }
  }
  return [meta.metadata.name, es.addressType ?? '', listWithMore(ports, portsMore, portCount, MAX),
    listWithMore(addrs, addrMore, addrCount, MAX), age(meta, now)];
});

const priorityClassPrinter = define<PriorityClass>([
  NAME,
  col('Value', 'integer', 'value represents the integer value of this priority class.'),
  col('Global-Default', 'boolean', 'globalDefault specifies whether this PriorityClass should be considered as the default priority for pods that do not have any priority class.'),
  AGE,
  col('PreemptionPolicy', 'string', 'preemptionPolicy is the Policy for preempting pods with lower priority.'),
], (pc, meta, now) => [meta.metadata.name, pc.value ?? 0, pc.globalDefault ?? false, age(meta, now), pc.preemptionPolicy ?? '']);

/** What a server without a printer for the kind shows (CRDs without printer columns). */
const defaultPrinter = define<KubeObject>([NAME, AGE], (_o, meta, now) => [meta.metadata.name, age(meta, now)]);

const PRINTERS: Record<string, Printer> = {
  ...WORKLOAD_PRINTERS,
  ...STORAGE_PRINTERS,
  ...ADMIN_PRINTERS,
  ...AUTOSCALING_PRINTERS,
  '/pods': podPrinter,
  'apps/deployments': deploymentPrinter,
  'apps/replicasets': replicaSetPrinter,
  '/services': servicePrinter,
  '/endpoints': endpointsPrinter,
  '/nodes': nodePrinter,
  '/namespaces': namespacePrinter,
  '/configmaps': configMapPrinter,
  '/secrets': secretPrinter,
  '/events': eventPrinter,
  // The same columns for the events.k8s.io/v1 view, read through the conversion back to core/v1.
  'events.k8s.io/events': { columns: eventPrinter.columns, row: (o: KubeObject, now: number) => eventPrinter.row(eventsV1ToCore(o), now) },
  '/serviceaccounts': serviceAccountPrinter,
  'coordination.k8s.io/leases': leasePrinter,
  'discovery.k8s.io/endpointslices': endpointSlicePrinter,
  'scheduling.k8s.io/priorityclasses': priorityClassPrinter,
};

/** The printer for a resource, by group and plural (any version); Name/Age for the rest. */
export function printerFor(r: Pick<ResourceDescriptor, 'group' | 'resource'>): Printer {
  return PRINTERS[`${r.group}/${r.resource}`] ?? defaultPrinter;
}
