import { EndpointSlices } from '@mk8s/api';
import type { RestStrategy } from '../../generic/strategy.js';

/** Written by the endpointslice controllers; PUT may create (upstream AllowCreateOnUpdate). */
export const endpointSliceStrategy: RestStrategy = { resource: EndpointSlices, allowCreateOnUpdate: true, tracksGeneration: false };
