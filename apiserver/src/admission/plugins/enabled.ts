/**
 * --enable-admission-plugins: which optional plugins run. NamespaceLifecycle, Priority and the pod
 * defaults always run (the server relies on them); NodeRestriction follows --authorization-mode=Node.
 * ServiceAccount and PodSecurity run only when named, so a bare apiserver (tests without the
 * serviceaccount controller) still admits pods in namespaces that have no `default` SA.
 */
export const ADMISSION_PLUGIN_NAMES = ['NamespaceLifecycle', 'ServiceAccount', 'NodeRestriction', 'PodSecurity', 'Priority', 'DefaultTolerationSeconds', 'LimitRanger', 'ResourceQuota'] as const;
export type AdmissionPluginName = typeof ADMISSION_PLUGIN_NAMES[number];

/** Parses a comma-separated list (repeatable flag); throws on a name this server does not know, as upstream. */
export function parseAdmissionPlugins(values: readonly string[]): AdmissionPluginName[] {
  const names = values.flatMap((v) => v.split(',')).map((s) => s.trim()).filter((s) => s !== '');
  for (const n of names) {
    if (!(ADMISSION_PLUGIN_NAMES as readonly string[]).includes(n)) {
      throw new Error(`enable-admission-plugins plugin "${n}" is unknown (known: ${ADMISSION_PLUGIN_NAMES.join(', ')})`);
    }
  }
  return names as AdmissionPluginName[];
}
