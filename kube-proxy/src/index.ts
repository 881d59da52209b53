export { createKubeProxy, type KubeProxyConfig, type KubeProxyComponent } from './create-kube-proxy.js';
export { Proxier, cleanupRules, type ProxierOptions, type SyncResult, type ServiceObj, type EndpointSliceObj } from './proxier.js';
export { renderRules, renderServicePort, assembleRules, ruleContext, isLargeCluster, LARGE_CLUSTER_ENDPOINTS_THRESHOLD, comparePorts, fixedRules, renderCleanup, incrementalRestoreInput, missingJumps, withJumps, isOwnedChain, JUMP_RULES, NAT_CHAINS, FILTER_CHAINS, type RulesInput, type RenderedRules, type RulesState, type RuleContext, type ServicePortRules, type FixedRules, type JumpRule } from './rules.js';
export { servicePorts, endpointsByServicePort, usableEndpoints, type ServicePortInfo, type EndpointInfo, type Protocol } from './service-state.js';
export { serviceChain, endpointChain, externalChain, servicePortName, base32 } from './chain-names.js';
export { ExecIptablesRunner, type ExecIptablesRunnerOptions, type IptablesRunner, type Table } from './iptables.js';
export { BoundedFrequencyRunner, type BoundedFrequencyRunnerOptions } from './bounded-frequency-runner.js';
export { newProxyMetrics, type ProxyMetrics } from './metrics.js';
