export { APIServices, apiServiceStrategy, validateAPIService, type APIService, type APIServiceSpec } from './types.js';
export { Aggregator, proxyToBackend, endpointFor, reachable, discoveryFailure, type AggregatorOptions, type Backend } from './aggregator.js';
