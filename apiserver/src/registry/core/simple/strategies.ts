/**
 * Resources with no behaviour beyond the generic Store: one line each.
 */
import { ConfigMaps, EndpointSlices, EndpointsResource, Events, Leases, PriorityClasses, Secrets, ServiceAccounts } from '@mk8s/api';
import type { RestStrategy } from '../../generic/strategy.js';

export const configMapStrategy: RestStrategy = { resource: ConfigMaps };
export const secretStrategy: RestStrategy = { resource: Secrets };
export const serviceAccountStrategy: RestStrategy = { resource: ServiceAccounts };
export const endpointsStrategy: RestStrategy = { resource: EndpointsResource, allowCreateOnUpdate: true };
export const eventStrategy: RestStrategy = { resource: Events, allowCreateOnUpdate: true };
export const leaseStrategy: RestStrategy = { resource: Leases, allowCreateOnUpdate: true, tracksGeneration: false };
export const endpointSliceStrategy: RestStrategy = { resource: EndpointSlices, allowCreateOnUpdate: true, tracksGeneration: false };
export const priorityClassStrategy: RestStrategy = { resource: PriorityClasses, tracksGeneration: false };
