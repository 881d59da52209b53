/**
 * The registry: one Store per served resource, each a RestStrategy plugged into the generic
 * Store (upstream's RESTStorageProvider per API group).
 */
import { Events, EventsV1, HorizontalPodAutoscalers, HorizontalPodAutoscalersV1, RESOURCES, REVIEW_RESOURCES } from '@mk8s/api';
import { ConvertedViewStore } from './generic/converted-view-store.js';
import { horizontalPodAutoscalerStrategy } from './autoscaling/strategy.js';
import { hpaV1ToV2, hpaV2ToV1 } from './autoscaling/conversion.js';
import { EventsV1Store } from './events/events-v1.js';
import { Store, type StoreOptions } from './generic/store.js';
import type { RestStrategy } from './generic/strategy.js';
import { Registry } from './registry.js';
import { builtinSubresources, statusSubresource } from '../endpoints/subresources.js';
import { crdStrategy } from '../apiextensions/crd-strategy.js';
import { CustomResourceDefinitions } from '../apiextensions/types.js';
import { APIServices, apiServiceStrategy } from '../apiregistration/types.js';
import { apiServicePrinter, crdPrinter, webhookConfigurationPrinter } from './extension-printers.js';
import { MutatingWebhookConfigurations, ValidatingWebhookConfigurations, mutatingWebhookStrategy, validatingWebhookStrategy } from '../admissionregistration/types.js';
import { podStrategy } from './core/pods/strategy.js';
import { namespaceStrategy } from './core/namespaces/strategy.js';
import { createServiceStrategy } from './core/services/strategy.js';
import { ServiceAllocator, type ServiceAllocatorOptions } from './core/services/allocator.js';
import { nodeStrategy } from './core/nodes/strategy.js';
import { configMapStrategy } from './core/configmaps/strategy.js';
import { secretStrategy } from './core/secrets/strategy.js';
import { serviceAccountStrategy } from './core/serviceaccounts/strategy.js';
import { endpointsStrategy } from './core/endpoints/strategy.js';
import { eventStrategy } from './core/events/strategy.js';
import { leaseStrategy } from './coordination/leases/strategy.js';
import { endpointSliceStrategy } from './discovery/endpointslices/strategy.js';
import { priorityClassStrategy } from './scheduling/priorityclasses/strategy.js';
import { deploymentStrategy } from './apps/deployments/strategy.js';
import { replicaSetStrategy } from './apps/replicasets/strategy.js';
import { daemonSetStrategy } from './apps/daemonsets/strategy.js';
import { statefulSetStrategy } from './apps/statefulsets/strategy.js';
import { controllerRevisionStrategy } from './apps/controllerrevisions/strategy.js';
import { podDisruptionBudgetStrategy } from './policy/poddisruptionbudgets/strategy.js';
import { RBAC_STRATEGIES } from './rbac/strategy.js';
import { jobStrategy } from './batch/jobs/strategy.js';
import { cronJobStrategy } from './batch/cronjobs/strategy.js';
import { persistentVolumeStrategy } from './core/persistentvolumes/strategy.js';
import { persistentVolumeClaimStrategy } from './core/persistentvolumeclaims/strategy.js';
import { storageClassStrategy } from './storage/storageclasses/strategy.js';
import { replicationControllerStrategy } from './core/replicationcontrollers/strategy.js';
import { podTemplateStrategy } from './core/podtemplates/strategy.js';
import { limitRangeStrategy, resourceQuotaStrategy } from './core/resourcequotas/strategy.js';
import { csrStrategy } from './certificates/certificatesigningrequests/strategy.js';

/** Strategies without per-server state. */
export const STRATEGIES: readonly RestStrategy[] = [
  podStrategy, namespaceStrategy, nodeStrategy, configMapStrategy, secretStrategy, serviceAccountStrategy,
  endpointsStrategy, eventStrategy, leaseStrategy, endpointSliceStrategy, priorityClassStrategy, deploymentStrategy, replicaSetStrategy,
  ...RBAC_STRATEGIES,
  jobStrategy, cronJobStrategy,
  daemonSetStrategy, statefulSetStrategy, controllerRevisionStrategy, podDisruptionBudgetStrategy,
  persistentVolumeStrategy, persistentVolumeClaimStrategy, storageClassStrategy,
  replicationControllerStrategy, podTemplateStrategy, resourceQuotaStrategy, limitRangeStrategy,
  csrStrategy, horizontalPodAutoscalerStrategy,
];

export interface RegistryOptions extends Omit<StoreOptions, 'strategy'> {
  /** Service IP range and node port range. */
  services?: Omit<ServiceAllocatorOptions, 'storage'>;
}

/**
 * The built-in resources: every one in RESOURCES with a Store (a default strategy if none is
 * listed) and its subresources; the review kinds without storage (their own routes answer them).
 */
export function createRegistry(o: RegistryOptions): Registry {
  const reg = new Registry();
  const { services, ...storeOpts } = o;
  const allocator = new ServiceAllocator({ storage: o.storage, ...(services ?? {}) });
  const strategies = [...STRATEGIES, createServiceStrategy(allocator)];
  for (const r of RESOURCES) {
    if (r === EventsV1) {
      // A view of the core Events store (registered before it in RESOURCES), not a store of its own.
      reg.add({ descriptor: r, store: new EventsV1Store(reg.get(Events)!, storeOpts), subresources: builtinSubresources(r) });
      continue;
    }
    if (r === HorizontalPodAutoscalersV1) {
      // autoscaling/v1: the v2 store's objects converted (registered after it in RESOURCES).
      const owner = reg.get(HorizontalPodAutoscalers)!;
      reg.add({ descriptor: r, store: new ConvertedViewStore({ ...storeOpts, view: r, owner, toView: hpaV2ToV1, fromView: hpaV1ToV2 }), subresources: builtinSubresources(r) });
      continue;
    }
    const strategy = strategies.find((s) => s.resource === r) ?? { resource: r };
    reg.add({ descriptor: r, store: new Store({ ...storeOpts, strategy }), subresources: builtinSubresources(r) });
  }
  // apiextensions.k8s.io: the CRDs themselves (their objects are added by the CRD controller).
  reg.add({ descriptor: CustomResourceDefinitions, store: new Store({ ...storeOpts, strategy: crdStrategy }), subresources: new Map([['status', statusSubresource]]), table: crdPrinter(CustomResourceDefinitions, o.clock) });
  // admissionregistration.k8s.io: the webhooks the admission chain calls.
  reg.add({ descriptor: ValidatingWebhookConfigurations, store: new Store({ ...storeOpts, strategy: validatingWebhookStrategy }), subresources: new Map(), table: webhookConfigurationPrinter(ValidatingWebhookConfigurations, o.clock) });
  reg.add({ descriptor: MutatingWebhookConfigurations, store: new Store({ ...storeOpts, strategy: mutatingWebhookStrategy }), subresources: new Map(), table: webhookConfigurationPrinter(MutatingWebhookConfigurations, o.clock) });
  // apiregistration.k8s.io: APIServices (the aggregator serves and proxies their groups).
  reg.add({ descriptor: APIServices, store: new Store({ ...storeOpts, strategy: apiServiceStrategy }), subresources: new Map([['status', statusSubresource]]), table: apiServicePrinter(APIServices, o.clock) });
  for (const r of REVIEW_RESOURCES) reg.add({ descriptor: r, store: undefined, subresources: new Map() });
  return reg;
}

export { Registry, type ResourceEntry, type Subresource, type SubresourceDiscovery, type RegistryChange, type TablePrinter, type PublishedSchemas } from './registry.js';
export { Store, type RequestContext, type ListParams, type WatchParams, type DeleteResult } from './generic/store.js';
export type { RestStrategy, StrategyContext, UpdateTarget } from './generic/strategy.js';
export { ServiceAllocator, type ServiceAllocatorOptions } from './core/services/allocator.js';
