import type { FilterPlugin, PluginFactory, PreFilterPlugin } from '../../framework/interfaces.js';
import { Status } from '../../framework/status.js';
import type { CycleState, NodeInfo, Pod } from '../../framework/types.js';

export const NAME = 'NodePorts';
export const ERR_REASON = "node(s) didn't have free ports for the requested pod ports";
const STATE_KEY = `PreFilter${NAME}`;

interface WantPort { ip: string; protocol: string; port: number }

/** Host ports the pod asks for. */
export function wantPorts(pod: Pod): WantPort[] {
  const out: WantPort[] = [];
  for (const c of pod.spec?.containers ?? []) for (const p of c.ports ?? []) {
    if (p.hostPort) out.push({ ip: p.hostIP || '0.0.0.0', protocol: p.protocol ?? 'TCP', port: p.hostPort });
  }
  return out;
}

/** A wildcard hostIP conflicts with any IP on the same protocol/port, and vice versa. */
export function fitsPorts(want: WantPort[], used: ReadonlySet<string>): boolean {
  for (const w of want) {
    if (used.has(`${w.ip}/${w.protocol}/${w.port}`)) return false;
    for (const u of used) {
      const [ip, proto, port] = u.split('/');
      if (proto === w.protocol && Number(port) === w.port && (ip === '0.0.0.0' || w.ip === '0.0.0.0')) return false;
    }
  }
  return true;
}

/** Rejects nodes where a requested hostPort is taken. */
export class NodePorts implements PreFilterPlugin, FilterPlugin {
  readonly name = NAME;
  preFilter(state: CycleState, pod: Pod): Status | undefined {
    const want = wantPorts(pod);
    if (want.length === 0) return Status.skip();
    state.write(STATE_KEY, want);
    return undefined;
  }
  filter(state: CycleState, pod: Pod, nodeInfo: NodeInfo): Status | undefined {
    const want = state.read<WantPort[]>(STATE_KEY) ?? wantPorts(pod);
    return fitsPorts(want, nodeInfo.usedPorts) ? undefined : Status.unschedulable(ERR_REASON);
  }
}
export const create: PluginFactory = () => new NodePorts();
