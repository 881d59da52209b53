/**
 * The replication manager (upstream pkg/controller/replication): core/v1 ReplicationControllers
 * run by the ReplicaSet controller's code, as upstream does, with label-map selectors.
 * Watches ReplicationControllers and Pods; writes Pods, ReplicationController status and Events.
 */
import { ReplicationControllers } from '@mk8s/api';
import type { ControllerContext } from '../../controller.js';
import { ReplicaSetController, type ReplicaSetControllerOptions } from '../replicaset/replicaset.js';

export const NAME = 'replicationcontroller';

export function createReplicationManager(ctx: ControllerContext, o: Pick<ReplicaSetControllerOptions, 'burstReplicas'> = {}): ReplicaSetController {
  return new ReplicaSetController(ctx, { ...o, resource: ReplicationControllers, name: NAME });
}
