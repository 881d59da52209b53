/**
 * The supervisor's restart back-off, as a pure function (the shape of the kubelet's
 * CrashLoopBackOff: 1 s doubling to 30 s here, forgotten once the process has stayed up long
 * enough). client/'s `Backoff` forgets an entry 2 × max after the last failure, whatever the
 * process did meanwhile; the promise here is "reset after 5 min *up*", so the decision reads the
 * uptime of the run that just ended instead.
 */
export interface RestartPolicy { initialMs: number; maxMs: number; resetAfterUpMs: number }

export const DEFAULT_RESTART_POLICY: RestartPolicy = { initialMs: 1_000, maxMs: 30_000, resetAfterUpMs: 5 * 60_000 };

/**
 * The delay before starting a process again after a run of upMs ended. prevDelayMs is the delay
 * used before that run (undefined for the first start): a run of at least resetAfterUpMs resets
 * the back-off to initialMs; otherwise the delay doubles, capped at maxMs.
 */
export function restartDelayMs(prevDelayMs: number | undefined, upMs: number, policy: RestartPolicy = DEFAULT_RESTART_POLICY): number {
  if (prevDelayMs === undefined || prevDelayMs <= 0 || upMs >= policy.resetAfterUpMs) return policy.initialMs;
  return Math.min(prevDelayMs * 2, policy.maxMs);
}
