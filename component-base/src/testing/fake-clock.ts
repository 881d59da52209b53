import type { Clock } from '../clock.js';

interface Timer { at: number; seq: number; fn: () => void; }

/** FakeClock: time moves only when a test calls step(ms); due timers fire in order. */
export class FakeClock implements Clock {
  private t: number;
  private seq = 0;
  private timers: Timer[] = [];
  constructor(startMs = 1_700_000_000_000) { this.t = startMs; }
  now(): number { return this.t; }
  setTimeout(fn: () => void, ms: number): () => void {
    const timer: Timer = { at: this.t + Math.max(0, ms), seq: this.seq++, fn };
    this.timers.push(timer);
    return () => { this.timers = this.timers.filter((x) => x !== timer); };
  }
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const onAbort = () => { cancel(); reject(signal?.reason); };
      const cancel = this.setTimeout(() => { signal?.removeEventListener('abort', onAbort); resolve(); }, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
  /** Advances time by ms, firing every timer that falls due, earliest first. */
  step(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      const due = this.timers.filter((x) => x.at <= end).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!due) break;
      this.timers = this.timers.filter((x) => x !== due);
      this.t = Math.max(this.t, due.at);
      due.fn();
    }
    this.t = end;
  }
  /** Number of pending timers (for assertions). */
  pending(): number { return this.timers.length; }
}
