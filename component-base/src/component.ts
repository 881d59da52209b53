/**
 * Component is one long-running part of the cluster (k3s Executor, controller-runtime Runnable).
 * `run` resolves when the signal aborts and the component has stopped; it rejects on a fatal error.
 * `ready` resolves once the component serves (dependents gate on it).
 */
export interface Component {
  readonly name: string;
  readonly ready: Promise<void>;
  run(signal: AbortSignal): Promise<void>;
}

/** startAfter wraps c so that its run starts only once gate resolves. */
export function startAfter(gate: Promise<void>, c: Component): Component {
  return { name: c.name, ready: c.ready, run: async (signal) => { await gate; if (!signal.aborted) await c.run(signal); } };
}

/** runComponents runs all components until signal aborts; the first failure aborts the others. */
export async function runComponents(signal: AbortSignal, components: Component[]): Promise<void> {
  const ac = new AbortController();
  const onAbort = () => ac.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    await Promise.all(components.map((c) => c.run(ac.signal).catch((err: unknown) => { ac.abort(err); throw err; })));
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}
