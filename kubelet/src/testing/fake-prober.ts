import type { Prober, ProbeOutcome } from '../prober.js';

/** FakeProber answers probes from a settable table: `results.set('<containerId>', false)`. */
export class FakeProber implements Prober {
  readonly results = new Map<string, boolean>();
  readonly calls: string[] = [];
  async probe(_h: unknown, t: { containerId: string }): Promise<ProbeOutcome> {
    this.calls.push(t.containerId);
    const ok = this.results.get(t.containerId) ?? true;
    return { ok, output: ok ? '' : 'fake probe failure' };
  }
}
