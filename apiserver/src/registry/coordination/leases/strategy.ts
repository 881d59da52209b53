import { Leases } from '@mk8s/api';
import type { RestStrategy } from '../../generic/strategy.js';

/** Leader election and node heartbeats PUT their Lease, creating it the first time (upstream AllowCreateOnUpdate). */
export const leaseStrategy: RestStrategy = { resource: Leases, allowCreateOnUpdate: true, tracksGeneration: false };
