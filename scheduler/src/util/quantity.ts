/** Quantities come from @mk8s/api (resource.Quantity semantics: MilliValue/Value rounded up). */
export { parseBytes, parseCpuMillis } from '@mk8s/api';
