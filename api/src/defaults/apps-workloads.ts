/**
 * SetDefaults_DaemonSet / SetDefaults_StatefulSet (pkg/apis/apps/v1/defaults.go) as kube 1.32
 * serves them: the StatefulSetAutoDeletePVC gate is on (retention policy defaulted to Retain),
 * MaxUnavailableStatefulSet is off (no maxUnavailable default; the controller reads absent as 1).
 */
type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export function defaultDaemonSet(ds: Obj, defaultTemplate: (t: unknown) => void): void {
  const spec: Obj = isObj(ds.spec) ? ds.spec : (ds.spec = {});
  const us: Obj = isObj(spec.updateStrategy) ? spec.updateStrategy : (spec.updateStrategy = {});
  us.type ||= 'RollingUpdate';
  if (us.type === 'RollingUpdate') {
    const ru: Obj = isObj(us.rollingUpdate) ? us.rollingUpdate : (us.rollingUpdate = {});
    ru.maxUnavailable ??= 1;
    ru.maxSurge ??= 0;
  }
  spec.revisionHistoryLimit ??= 10;
  defaultTemplate(spec.template ??= {});
}

export function defaultStatefulSet(sts: Obj, defaultTemplate: (t: unknown) => void): void {
  const spec: Obj = isObj(sts.spec) ? sts.spec : (sts.spec = {});
  spec.podManagementPolicy ||= 'OrderedReady';
  const us: Obj = isObj(spec.updateStrategy) ? spec.updateStrategy : (spec.updateStrategy = {});
  us.type ||= 'RollingUpdate';
  if (us.type === 'RollingUpdate') {
    const ru: Obj = isObj(us.rollingUpdate) ? us.rollingUpdate : (us.rollingUpdate = {});
    ru.partition ??= 0;
  }
  const pvc: Obj = isObj(spec.persistentVolumeClaimRetentionPolicy) ? spec.persistentVolumeClaimRetentionPolicy : (spec.persistentVolumeClaimRetentionPolicy = {});
  pvc.whenDeleted ||= 'Retain';
  pvc.whenScaled ||= 'Retain';
  spec.replicas ??= 1;
  spec.revisionHistoryLimit ??= 10;
  for (const t of Array.isArray(spec.volumeClaimTemplates) ? spec.volumeClaimTemplates : []) {
    if (!isObj(t)) continue;
    const ts: Obj = isObj(t.spec) ? t.spec : (t.spec = {});
    ts.volumeMode ??= 'Filesystem';
    t.status ??= { phase: 'Pending' };
  }
  defaultTemplate(spec.template ??= {});
}
