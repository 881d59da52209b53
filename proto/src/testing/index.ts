export { FakeRuntimeService, defaultExecHandler, type FakeRuntimeServiceOptions, type FakeExecHandler, type FakeExecResult, type FakeSandbox, type FakeContainer } from './fake-runtime-service.js';
export { FakeImageService, type FakeImageServiceOptions } from './fake-image-service.js';
export { defineRuntimeServiceConformance, type ConformanceTarget } from './conformance.js';
