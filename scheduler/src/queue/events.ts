/**
 * Cluster events that can make an unschedulable pod schedulable, and which plugins' rejections each
 * can resolve (a simplified EventsToRegister / QueueingHint table).
 */
export type ClusterEvent =
  | 'NodeAdd' | 'NodeUpdate' | 'AssignedPodAdd' | 'AssignedPodUpdate' | 'AssignedPodDelete'
  | 'PersistentVolumeChange' | 'UnschedulableTimeout' | 'ForceActivate';

const ALL = '*';
const INTERESTED: Record<ClusterEvent, readonly string[]> = {
  NodeAdd: [ALL],
  NodeUpdate: [ALL],
  AssignedPodAdd: ['InterPodAffinity', 'PodTopologySpread'],
  AssignedPodUpdate: ['InterPodAffinity', 'PodTopologySpread'],
  AssignedPodDelete: ['NodeResourcesFit', 'NodePorts', 'InterPodAffinity', 'PodTopologySpread', 'DefaultPreemption'],
  // A claim, PV or StorageClass added or changed (upstream's PVC/PV/StorageClass events for VolumeBinding).
  PersistentVolumeChange: ['VolumeBinding'],
  UnschedulableTimeout: [ALL],
  ForceActivate: [ALL],
};

/** Whether event might help a pod that the given plugins rejected (no plugins: any event might). */
export function eventMayHelp(event: ClusterEvent, unschedulablePlugins: ReadonlySet<string>): boolean {
  if (unschedulablePlugins.size === 0) return true;
  const interested = INTERESTED[event];
  if (interested.includes(ALL)) return true;
  for (const p of unschedulablePlugins) if (interested.includes(p)) return true;
  return false;
}
