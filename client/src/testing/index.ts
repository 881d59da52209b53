export * from './object-tracker.js';
export * from './fake-clientset.js';
export * from './fake-informer.js';
export * from './fake-event-recorder.js';
export * from './controller-fixture.js';
export * from './clientset-conformance.js';
