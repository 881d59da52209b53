import { spawn } from 'node:child_process';

/** The result of one command. */
export interface CmdResult { code: number; stdout: string; stderr: string }

/** Runs a command (no shell) and collects its output; never rejects for a non-zero exit. */
export type CommandRunner = (cmd: string, args: string[], stdin?: string) => Promise<CmdResult>;

export const runCommand: CommandRunner = (cmd, args, stdin) => new Promise((resolve, reject) => {
  const p = spawn(cmd, args, { stdio: [stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  p.stdout!.on('data', (b: Buffer) => out.push(b));
  p.stderr!.on('data', (b: Buffer) => err.push(b));
  p.on('error', reject);
  p.on('close', (code) => resolve({ code: code ?? 1, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() }));
  if (p.stdin) { p.stdin.on('error', () => undefined); p.stdin.end(stdin); }
});

/** Runs a command that must succeed; rejects with its stderr otherwise. */
export async function mustRun(run: CommandRunner, cmd: string, args: string[], stdin?: string): Promise<string> {
  const r = await run(cmd, args, stdin);
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${(r.stderr || r.stdout).trim()}`);
  return r.stdout;
}
