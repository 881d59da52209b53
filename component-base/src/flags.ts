import { parseArgs } from 'node:util';

/** FlagSpec describes one `--kebab-case` flag of a component binary. */
export interface FlagSpec { type: 'string' | 'boolean'; default?: string | boolean; }

/**
 * parseFlags parses a component's argv with node's parseArgs; each flag may also come from the
 * environment as MK8S_<UPPER_SNAKE> (so compose files can configure a binary without a shell).
 */
export function parseFlags<T extends Record<string, FlagSpec>>(argv: string[], spec: T): { [K in keyof T]: T[K]['type'] extends 'boolean' ? boolean : string | undefined } {
  const options: Record<string, { type: 'string' | 'boolean' }> = {};
  for (const [k, v] of Object.entries(spec)) options[k] = { type: v.type };
  const { values } = parseArgs({ args: argv, options, strict: true, allowPositionals: true });
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(spec)) {
    const env = process.env[`MK8S_${k.replace(/-/g, '_').toUpperCase()}`];
    const given = (values as Record<string, unknown>)[k];
    if (given !== undefined) out[k] = given;
    else if (env !== undefined) out[k] = v.type === 'boolean' ? env === 'true' || env === '1' : env;
    else out[k] = v.default;
  }
  return out as never;
}
