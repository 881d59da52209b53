/**
 * The CNI spec's plumbing (CNI skel): the environment a runtime passes, the error object, and the
 * versions this plugin speaks. Spec 1.0.0: https://github.com/containernetworking/cni/blob/main/SPEC.md
 */

export const SPEC_VERSION = '1.0.0';
export const SUPPORTED_VERSIONS = ['0.3.0', '0.3.1', '0.4.0', '1.0.0'] as const;

/** Well-known error codes (spec "Error"); plugin-specific codes are 100 and up. */
export const ERR = {
  incompatibleVersion: 1,
  unsupportedField: 2,
  unknownContainer: 3,
  invalidEnv: 4,
  io: 5,
  decode: 6,
  invalidConfig: 7,
  tryAgainLater: 11,
  /** ours: the pod CIDR has no free address. */
  ipamExhausted: 100,
  /** ours: CHECK found the attachment not as ADD left it. */
  checkFailed: 101,
} as const;

/** CniError carries a spec error code; the plugin prints it as the error JSON and exits 1. */
export class CniError extends Error {
  constructor(readonly code: number, msg: string, readonly details?: string) { super(msg); }
  toJSON(cniVersion: string): Record<string, unknown> {
    return { cniVersion, code: this.code, msg: this.message, ...(this.details ? { details: this.details } : {}) };
  }
}

export type CniCommand = 'ADD' | 'DEL' | 'CHECK' | 'VERSION' | 'GC';

/** The CNI_* variables, validated per command as the spec requires. */
export interface CniArgs {
  command: CniCommand;
  containerId: string;
  netns: string;
  ifname: string;
  args: Record<string, string>;
  path: string[];
}

/** parseEnv reads CNI_* and checks the ones the command needs (error 4 otherwise). */
export function parseEnv(env: NodeJS.ProcessEnv): CniArgs {
  const command = env['CNI_COMMAND'] ?? '';
  if (!['ADD', 'DEL', 'CHECK', 'VERSION', 'GC'].includes(command)) throw new CniError(ERR.invalidEnv, `unknown CNI_COMMAND "${command}"`);
  const a: CniArgs = {
    command: command as CniCommand,
    containerId: env['CNI_CONTAINERID'] ?? '',
    netns: env['CNI_NETNS'] ?? '',
    ifname: env['CNI_IFNAME'] ?? '',
    args: Object.fromEntries((env['CNI_ARGS'] ?? '').split(';').filter((kv) => kv.includes('=')).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)])),
    path: (env['CNI_PATH'] ?? '').split(':').filter(Boolean),
  };
  const need: Record<CniCommand, (keyof CniArgs)[]> = {
    ADD: ['containerId', 'netns', 'ifname'], CHECK: ['containerId', 'netns', 'ifname'], DEL: ['containerId', 'ifname'], VERSION: [], GC: [],
  };
  for (const k of need[a.command]) {
    if (!a[k]) throw new CniError(ERR.invalidEnv, `required env variable CNI_${k === 'containerId' ? 'CONTAINERID' : k.toUpperCase()} missing`);
  }
  return a;
}

/** Compares dotted versions numerically. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < 3; i++) { const d = (pa[i] ?? 0) - (pb[i] ?? 0); if (d) return d; }
  return 0;
}
