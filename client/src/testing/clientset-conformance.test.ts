import { defineClientsetConformance } from './clientset-conformance.js';
import { FakeClientset } from './fake-clientset.js';

defineClientsetConformance('FakeClientset', async () => ({ client: new FakeClientset(), namespace: 'default' }));
