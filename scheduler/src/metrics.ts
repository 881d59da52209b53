/** The scheduler's Prometheus metrics, named as upstream's (pkg/scheduler/metrics). */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { PendingPods } from './queue/scheduling-queue.js';

export type AttemptResult = 'scheduled' | 'unschedulable' | 'error';

export interface SchedulerMetrics {
  observeAttempt(result: AttemptResult, profile: string, seconds: number): void;
  observePreemption(victims: number): void;
  observeBind(seconds: number, ok: boolean): void;
}

export function newSchedulerMetrics(registry: Registry, pending: () => PendingPods): SchedulerMetrics {
  const attempts = new Counter({ name: 'scheduler_schedule_attempts_total', help: 'Number of attempts to schedule pods, by the result.', labelNames: ['result', 'profile'], registers: [registry] });
  const latency = new Histogram({
    name: 'scheduler_scheduling_attempt_duration_seconds', help: 'Scheduling attempt latency in seconds (scheduling algorithm + binding).',
    labelNames: ['result', 'profile'], buckets: [0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128, 0.256, 0.512, 1.024, 2.048, 4.096, 8.192], registers: [registry],
  });
  const bindLatency = new Histogram({ name: 'scheduler_binding_duration_seconds', help: 'Binding latency in seconds.', labelNames: ['result'], buckets: [0.001, 0.004, 0.016, 0.064, 0.256, 1.024, 4.096], registers: [registry] });
  const preemptionAttempts = new Counter({ name: 'scheduler_preemption_attempts_total', help: 'Total preemption attempts in the cluster till now.', registers: [registry] });
  const preemptionVictims = new Histogram({ name: 'scheduler_preemption_victims', help: 'Number of selected preemption victims.', buckets: [1, 2, 4, 8, 16, 32, 64], registers: [registry] });
  new Gauge({
    name: 'scheduler_pending_pods', help: "Number of pending pods, by the queue type. 'active' means number of pods in activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means number of pods in unschedulablePods; 'gated' means number of gated pods.",
    labelNames: ['queue'], registers: [registry],
    collect() {
      const p = pending();
      this.set({ queue: 'active' }, p.active); this.set({ queue: 'backoff' }, p.backoff);
      this.set({ queue: 'unschedulable' }, p.unschedulable); this.set({ queue: 'gated' }, p.gated);
    },
  });
  return {
    observeAttempt(result, profile, seconds) { attempts.inc({ result, profile }); latency.observe({ result, profile }, seconds); },
    observePreemption(victims) { preemptionAttempts.inc(); if (victims > 0) preemptionVictims.observe(victims); },
    observeBind(seconds, ok) { bindLatency.observe({ result: ok ? 'success' : 'error' }, seconds); },
  };
}

/** Metrics that go nowhere (unit tests). */
export const noopMetrics: SchedulerMetrics = { observeAttempt() {}, observePreemption() {}, observeBind() {} };
