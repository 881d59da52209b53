import { EndpointsResource } from '@mk8s/api';
import type { RestStrategy } from '../../generic/strategy.js';

/** Endpoints are written by the endpoints controller with PUT, which may create them (upstream AllowCreateOnUpdate). */
export const endpointsStrategy: RestStrategy = { resource: EndpointsResource, allowCreateOnUpdate: true };
