export { makePod, makeNode, type PodOptions, type NodeOptions } from './wrappers.js';
export { newTestFramework, snapshotOf, testHandle, type TestHandleOptions } from './framework.js';
