/** setupSignalHandler maps SIGINT/SIGTERM to one AbortSignal; a second signal exits at once. */
export function setupSignalHandler(): AbortSignal {
  const ac = new AbortController();
  let count = 0;
  const handler = (sig: NodeJS.Signals) => {
    count++;
    if (count > 1) process.exit(1);
    ac.abort(new Error(`received ${sig}`));
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return ac.signal;
}
