/** Clock is injected wherever time matters, so unit tests never sleep (client-go clock). */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Calls fn after ms; returns a cancel function. */
  setTimeout(fn: () => void, ms: number): () => void;
  /** Resolves after ms, or rejects with the signal's reason when it aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The wall clock. */
export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    const t = setTimeout(fn, ms);
    return () => clearTimeout(t);
  },
  sleep(ms, signal) {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const t = setTimeout(() => { signal?.removeEventListener('abort', onAbort); resolve(); }, ms);
      const onAbort = () => { clearTimeout(t); reject(signal?.reason); };
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  },
};
