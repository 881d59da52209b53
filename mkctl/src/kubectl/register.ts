/** Registers every kubectl-style command on the mkctl program. */
import type { Command } from 'commander';
import type { CliContext } from './context.js';
import { registerGet } from './commands/get.js';
import { registerApply } from './commands/apply.js';
import { registerGenerators } from './commands/generators.js';
import { registerDelete } from './commands/delete.js';
import { registerDescribe } from './commands/describe.js';
import { registerLogsExec } from './commands/logs-exec.js';
import { registerWorkloads } from './commands/workloads.js';
import { registerNodes } from './commands/nodes.js';
import { registerMetadata } from './commands/metadata.js';
import { registerMisc } from './commands/misc.js';
import { registerTop } from './commands/top.js';
import { registerTrace } from '../trace/trace-command.js';
import { registerDoctor } from '../doctor/doctor-command.js';

export function registerKubectlCommands(program: Command, ctx: () => CliContext): void {
  registerGet(program, ctx);
  registerDescribe(program, ctx);
  registerApply(program, ctx);
  registerGenerators(program, ctx);
  registerDelete(program, ctx);
  registerLogsExec(program, ctx);
  registerWorkloads(program, ctx);
  registerNodes(program, ctx);
  registerMetadata(program, ctx);
  registerMisc(program, ctx);
  registerTop(program, ctx);
  registerTrace(program, ctx);
  registerDoctor(program, ctx);
}
