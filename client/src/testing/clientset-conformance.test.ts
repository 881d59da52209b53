import { defineClientsetConformance } from './clientset-conformance.js';
import { FakeClientset } from './fake-clientset.js';

defineClientsetConformance('FakeClientset', async () => ({ client: new FakeClientset({ gracefulDeletion: true }), namespace: 'default' }));
