/** How the node-local readers run a program: argv only, never a shell (nothing reaches one). */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

/**
 * Runs file with args and resolves its stdout; rejects on a non-zero exit, a timeout or too much
 * output. Injected so the readers are tested without iptables or a netns.
 */
export type ExecFile = (file: string, args: readonly string[], o: { timeoutMs: number; maxBuffer?: number }) => Promise<string>;

const run = promisify(execFile);

export const execFileStdout: ExecFile = async (file, args, o) =>
  (await run(file, [...args], { timeout: o.timeoutMs, maxBuffer: o.maxBuffer ?? 1 << 20, encoding: 'utf8' })).stdout;

/** The first line of an error, as evidence text. */
export const firstLine = (e: unknown): string => (e instanceof Error ? e.message.split('\n')[0]! : String(e));
