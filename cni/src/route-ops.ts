/**
 * Routes the node route agent owns, marked with their own routing protocol number so the agent
 * can list exactly what it made (and never touches the routes of anyone else).
 */
import { mustRun, runCommand, type CommandRunner } from './exec.js';

/** The rtnetlink protocol id of mk8s host-gw routes ("proto 77" in `ip route`). */
export const ROUTE_PROTO = '77';

/** One host-gw route: a podCIDR via a node IP. */
export interface HostGwRoute { dst: string; via: string }

/** RouteOps: the agent's view of the node's routing table. */
export interface RouteOps {
  /** The routes this agent made (proto 77). */
  list(): Promise<HostGwRoute[]>;
  /** Adds or changes a route (ip route replace). Idempotent. */
  replace(r: HostGwRoute): Promise<void>;
  /** Deletes a route of ours. Idempotent. */
  delete(dst: string): Promise<void>;
}

export class IprouteRouteOps implements RouteOps {
  constructor(private readonly run: CommandRunner = runCommand) {}

  async list(): Promise<HostGwRoute[]> {
    const out = await mustRun(this.run, 'ip', ['-j', '-4', 'route', 'show', 'proto', ROUTE_PROTO]);
    const rows = JSON.parse(out || '[]') as { dst?: string; gateway?: string }[];
    return rows.filter((r) => r.dst && r.gateway).map((r) => ({ dst: r.dst!.includes('/') ? r.dst! : `${r.dst}/32`, via: r.gateway! }));
  }

  async replace(r: HostGwRoute): Promise<void> {
    await mustRun(this.run, 'ip', ['route', 'replace', r.dst, 'via', r.via, 'proto', ROUTE_PROTO]);
  }

  async delete(dst: string): Promise<void> {
    const r = await this.run('ip', ['route', 'del', dst, 'proto', ROUTE_PROTO]);
    if (r.code !== 0 && !/no such process|not found/i.test(r.stderr)) throw new Error(`ip route del ${dst}: ${r.stderr.trim()}`);
  }
}
