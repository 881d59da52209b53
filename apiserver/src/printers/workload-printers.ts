/**
 * Printers for workload kinds the scheme may serve later (DaemonSets, StatefulSets, Jobs,
 * CronJobs, ReplicationControllers, PodDisruptionBudgets), after upstream's printers.go. Local
 * minimal shapes: only the fields the columns read.
 */
import type { Container, LabelSelector } from '@mk8s/api';
import { formatLabelSelector } from '@mk8s/api';
import { humanDuration, translateTimestampSince } from '@mk8s/api';
import type { TableColumnDefinition } from './table.js';
import { AGE, CONTAINERS, IMAGES, NAME, col, containerCells, define, formatLabels, selectorText, wide, type Printer } from './printer-kit.js';

type Condition = { type?: string; status?: string };
type Template = { spec?: { containers?: Container[]; nodeSelector?: Record<string, string> } };

interface DaemonSet { spec?: { selector?: LabelSelector; template?: Template }; status?: { desiredNumberScheduled?: number; currentNumberScheduled?: number; numberReady?: number; updatedNumberScheduled?: number; numberAvailable?: number } }
interface StatefulSet { spec?: { replicas?: number; template?: Template }; status?: { readyReplicas?: number } }
interface Job { metadata?: { deletionTimestamp?: string }; spec?: { completions?: number; parallelism?: number; selector?: LabelSelector; template?: Template }; status?: { succeeded?: number; startTime?: string; completionTime?: string; conditions?: Condition[] } }
interface CronJob { spec?: { schedule?: string; timeZone?: string; suspend?: boolean; jobTemplate?: { spec?: { selector?: LabelSelector; template?: Template } } }; status?: { active?: unknown[]; lastScheduleTime?: string } }
interface ReplicationController { spec?: { replicas?: number; selector?: Record<string, string>; template?: Template }; status?: { replicas?: number; readyReplicas?: number } }
interface PodDisruptionBudget { spec?: { minAvailable?: number | string; maxUnavailable?: number | string }; status?: { disruptionsAllowed?: number } }

const SELECTOR: TableColumnDefinition = wide(col('Selector', 'string', 'A label query over pods that should match the replica count.'));

const daemonSetPrinter = define<DaemonSet>([
  NAME,
  col('Desired', 'integer', 'The total number of nodes that should be running the daemon pod.'),
  col('Current', 'integer', 'The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod.'),
  col('Ready', 'integer', 'numberReady is the number of nodes that should be running the daemon pod and have one or more of the daemon pod running with a Ready Condition.'),
  col('Up-to-date', 'integer', 'The total number of nodes that are running updated daemon pod'),
  col('Available', 'integer', 'The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available.'),
  col('Node Selector', 'string', "NodeSelector is a selector which must be true for the pod to fit on a node."),
  AGE, CONTAINERS, IMAGES, SELECTOR,
], (ds, meta, now) => {
  const s = ds.status ?? {};
  return [meta.metadata.name, s.desiredNumberScheduled ?? 0, s.currentNumberScheduled ?? 0, s.numberReady ?? 0, s.updatedNumberScheduled ?? 0,
    s.numberAvailable ?? 0, formatLabels(ds.spec?.template?.spec?.nodeSelector), translateTimestampSince(meta.metadata.creationTimestamp, now),
    ...containerCells(ds.spec?.template?.spec?.containers), selectorText(ds.spec?.selector)];
});

const statefulSetPrinter = define<StatefulSet>([
  NAME, col('Ready', 'string', 'Number of the pod with ready state'), AGE, CONTAINERS, IMAGES,
], (ss, meta, now) => [meta.metadata.name, `${ss.status?.readyReplicas ?? 0}/${ss.spec?.replicas ?? 1}`,
  translateTimestampSince(meta.metadata.creationTimestamp, now), ...containerCells(ss.spec?.template?.spec?.containers)]);

const hasCondition = (cs: Condition[] | undefined, type: string) => (cs ?? []).some((c) => c.type === type && c.status === 'True');

const jobPrinter = define<Job>([
  NAME,
  col('Status', 'string', 'Status of the job.'),
  col('Completions', 'string', 'The number of pods which reached phase Succeeded.'),
  col('Duration', 'string', 'Time required to complete the job.'),
  AGE, CONTAINERS, IMAGES, SELECTOR,
], (job, meta, now) => {
  const st = job.status ?? {};
  const succeeded = st.succeeded ?? 0;
  let completions: string;
  if (job.spec?.completions !== undefined && job.spec.completions !== null) completions = `${succeeded}/${job.spec.completions}`;
  else completions = (job.spec?.parallelism ?? 0) > 1 ? `${succeeded}/1 of ${job.spec!.parallelism}` : `${succeeded}/1`;
  let duration = '';
  if (st.startTime) {
    const start = Date.parse(st.startTime);
    duration = humanDuration((st.completionTime ? Date.parse(st.completionTime) : now) - start);
  }
  const cs = st.conditions;
  const status = hasCondition(cs, 'Complete') ? 'Complete'
    : hasCondition(cs, 'Failed') ? 'Failed'
    : meta.metadata.deletionTimestamp ? 'Terminating'
    : hasCondition(cs, 'Suspended') ? 'Suspended'
    : hasCondition(cs, 'FailureTarget') ? 'FailureTarget'
    : hasCondition(cs, 'SuccessCriteriaMet') ? 'SuccessCriteriaMet'
    : 'Running';
  return [meta.metadata.name, status, completions, duration, translateTimestampSince(meta.metadata.creationTimestamp, now),
    ...containerCells(job.spec?.template?.spec?.containers), formatLabelSelector(job.spec?.selector)];
});

const cronJobPrinter = define<CronJob>([
  NAME,
  col('Schedule', 'string', 'The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron.'),
  col('Timezone', 'string', 'The time zone name for the given schedule, see https://en.wikipedia.org/wiki/List_of_tz_database_time_zones.'),
  col('Suspend', 'boolean', 'This flag tells the controller to suspend subsequent executions, it does not apply to already started executions.'),
  col('Active', 'integer', 'A list of pointers to currently running jobs.'),
  col('Last Schedule', 'string', 'Information when was the last time the job was successfully scheduled.'),
  AGE, CONTAINERS, IMAGES, SELECTOR,
], (cj, meta, now) => {
  const tmpl = cj.spec?.jobTemplate?.spec;
  return [meta.metadata.name, cj.spec?.schedule ?? '', cj.spec?.timeZone ?? '<none>',
    // printBoolPtr: "True" / "False" / "<unset>", as kubectl shows them.
    cj.spec?.suspend === undefined || cj.spec.suspend === null ? '<unset>' : cj.spec.suspend ? 'True' : 'False',
    (cj.status?.active ?? []).length, cj.status?.lastScheduleTime ? translateTimestampSince(cj.status.lastScheduleTime, now) : '<none>',
    translateTimestampSince(meta.metadata.creationTimestamp, now), ...containerCells(tmpl?.template?.spec?.containers), formatLabelSelector(tmpl?.selector)];
});

const replicationControllerPrinter = define<ReplicationController>([
  NAME,
  col('Desired', 'integer', 'Replicas is the number of desired replicas.'),
  col('Current', 'integer', 'Replicas is the most recently observed number of replicas.'),
  col('Ready', 'integer', 'The number of ready replicas for this replication controller.'),
  AGE, CONTAINERS, IMAGES, SELECTOR,
], (rc, meta, now) => [meta.metadata.name, rc.spec?.replicas ?? 1, rc.status?.replicas ?? 0, rc.status?.readyReplicas ?? 0,
  translateTimestampSince(meta.metadata.creationTimestamp, now), ...containerCells(rc.spec?.template?.spec?.containers), formatLabels(rc.spec?.selector)]);

const intOrPercent = (v: number | string | undefined): string => (v === undefined || v === null ? 'N/A' : String(v));

const podDisruptionBudgetPrinter = define<PodDisruptionBudget>([
  NAME,
  col('Min Available', 'string', 'The minimum number of pods that must be available simultaneously.'),
  col('Max Unavailable', 'string', 'The maximum number of pods that may be unavailable simultaneously.'),
  col('Allowed Disruptions', 'integer', 'Number of pod disruptions that are currently allowed.'),
  AGE,
], (pdb, meta, now) => [meta.metadata.name, intOrPercent(pdb.spec?.minAvailable), intOrPercent(pdb.spec?.maxUnavailable),
  pdb.status?.disruptionsAllowed ?? 0, translateTimestampSince(meta.metadata.creationTimestamp, now)]);

interface ControllerRevision { metadata?: { ownerReferences?: { apiVersion?: string; kind?: string; name?: string; controller?: boolean }[] }; revision?: number }

/** printControllerRevision: CONTROLLER is `<kind>.<group>/<name>` of the controller owner, lower-cased kind. */
const controllerRevisionPrinter = define<ControllerRevision>([
  NAME, col('Controller', 'string', 'Controller of the object'), col('Revision', 'string', 'Revision of the ControllerRevision'), AGE,
], (cr, meta, now) => {
  const ref = (cr.metadata?.ownerReferences ?? []).find((r) => r.controller);
  let controller = '<none>';
  if (ref) {
    const group = (ref.apiVersion ?? '').includes('/') ? (ref.apiVersion ?? '').split('/')[0] : '';
    controller = `${(group ? `${ref.kind}.${group}` : String(ref.kind)).toLowerCase()}/${ref.name}`;
  }
  return [meta.metadata.name, controller, cr.revision ?? 0, translateTimestampSince(meta.metadata.creationTimestamp, now)];
});

/** group/resource → printer. */
export const WORKLOAD_PRINTERS: Record<string, Printer> = {
  'apps/daemonsets': daemonSetPrinter,
  'apps/statefulsets': statefulSetPrinter,
  'apps/controllerrevisions': controllerRevisionPrinter,
  'batch/jobs': jobPrinter,
  'batch/cronjobs': cronJobPrinter,
  '/replicationcontrollers': replicationControllerPrinter,
  'policy/poddisruptionbudgets': podDisruptionBudgetPrinter,
};


