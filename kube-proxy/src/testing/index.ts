export { FakeIptablesRunner } from './fake-iptables-runner.js';
