export { FakeProber } from './fake-prober.js';
