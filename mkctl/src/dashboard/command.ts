/**
 * `mkctl dashboard [--url] [KIND/NAME] [-n NS]`: the dashboard's address, or (--url) a URL that
 * logs the admin in: a short-lived TokenRequest token of kube-system/mk8s-dashboard-admin in the
 * URL fragment. With an object, the URL opens that object's chain view.
 */
import type { Command } from 'commander';
import { ServiceAccounts } from '@mk8s/api';
import type { CliContext } from '../kubectl/context.js';
import { CliError } from '../kubectl/context.js';
import { resolveResource } from '../kubectl/resources.js';
import { DASHBOARD_ADMIN_SA, DASHBOARD_TOKEN_SECONDS, DASHBOARD_URL, dashboardLoginUrl } from '../cluster/dashboard.js';

interface TokenRequestStatus { status?: { token?: string; expirationTimestamp?: string } }

/** KIND/NAME → the kind and name (KIND as kubectl accepts it: deploy, deployment, deployment.apps). */
export function parseObjectArg(arg: string, namespace: string): { kind: string; namespace?: string; name: string } {
  const i = arg.indexOf('/');
  if (i <= 0 || i === arg.length - 1) throw new CliError(`error: expected KIND/NAME, got "${arg}"`);
  const r = resolveResource(arg.slice(0, i));
  return { kind: r.kind, name: arg.slice(i + 1), ...(r.namespaced ? { namespace } : {}) };
}

export function registerDashboardCommand(program: Command, ctx: () => CliContext): void {
  program.command('dashboard').description("the web dashboard's address; --url: a URL that logs the admin in (and opens KIND/NAME's chain view)")
    .argument('[object]', 'KIND/NAME whose chain view the URL opens')
    .option('--url', 'print a login URL with a short-lived token of the admin ServiceAccount (in the URL fragment)')
    .option('--expiration <seconds>', 'lifetime of the login token', String(DASHBOARD_TOKEN_SECONDS))
    .option('--address <url>', 'the dashboard address', process.env['MK8S_DASHBOARD_URL'] ?? DASHBOARD_URL)
    .action(async (object: string | undefined, o: { url?: boolean; expiration: string; address: string }) => {
      const c = ctx();
      const target = object ? parseObjectArg(object, c.namespace) : undefined;
      if (!o.url) { c.print(`${o.address}/\n(mkctl dashboard --url prints a URL that logs you in)\n`); return; }
      const { namespace, name } = DASHBOARD_ADMIN_SA;
      const tr = await c.client.resource(ServiceAccounts, namespace).createSubresource(name, 'token', {
        apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: Number(o.expiration) },
      }) as TokenRequestStatus;
      const token = tr.status?.token;
      if (!token) throw new CliError(`error: no token for serviceaccount ${namespace}/${name} (is the cluster up? mkctl cluster up creates it)`);
      c.print(`${dashboardLoginUrl(o.address, token, target)}\n`);
    });
}
