/** Registers every kubectl-style command on the mkctl program. */
import type { Command } from 'commander';
import type { CliContext } from './context.js';
import { registerGet } from './commands/get.js';
import { registerApply } from './commands/apply.js';
import { registerDelete } from './commands/delete.js';
import { registerDescribe } from './commands/describe.js';

export function registerKubectlCommands(program: Command, ctx: () => CliContext): void {
  registerGet(program, ctx);
  registerApply(program, ctx);
  registerDelete(program, ctx);
  registerDescribe(program, ctx);
}
