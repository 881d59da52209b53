/**
 * The chain view: an object's chain as a picture, one box per link in order (stored → owner
 * controller → ReplicaSet → pods → scheduled → node → image → started → ready → endpoints →
 * kube-proxy), each with its status in words and colour, its evidence, owner, hint and logs;
 * the first broken link is marked. Live: LiveChain re-gathers on watch events, and each gather
 * is decorated with kube-proxy's rules (decorate.ts).
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import type { TraceKind } from '@mk8s/api/trace';
import { decorateForDashboard } from './decorate';
import { LiveChain, type ApiGet, type ApiWatch, type ChainState } from './live-chain';
import { chainModel, type ChainLinkView } from './model';

export interface ChainViewProps {
  /** A kind the trace follows (TRACE_KINDS), as the route names it after traceKindOf. */
  kind: TraceKind;
  namespace: string;
  name: string;
  get: ApiGet;
  watch: ApiWatch;
  /** How a failed read shows (the shell's Forbidden / Unauthorized panel). */
  renderError?: (err: unknown, what: string) => ComponentChildren;
}

const ICON: Record<ChainLinkView['status'], string> = { ok: '✓', broken: '✗', pending: '…', info: 'i', unreached: '○' };

function clock(t: string | number | undefined): string {
  if (t === undefined) return '';
  const d = new Date(t);
  return Number.isNaN(d.getTime()) ? '' : d.toLocaleTimeString([], { hour12: false });
}

function LinkItem({ l }: { l: ChainLinkView }) {
  return (
    <li class={`chain-link status-${l.status}${l.firstBroken ? ' first-broken' : ''}`} data-step={l.step} data-status={l.status}
      {...(l.firstBroken ? { 'aria-current': 'step' } : {})}>
      <div class="chain-head">
        <span class="chain-badge"><span aria-hidden="true">{ICON[l.status]} </span>{l.statusText}</span>
        <span class="chain-step">{l.label}</span>
        {l.time && <time dateTime={l.time}>{clock(l.time)}</time>}
        {l.firstBroken && <strong class="chain-first">First broken link</strong>}
      </div>
      <p class="chain-evidence">{l.evidence}</p>
      {(l.owner || l.hint || l.logs.length > 0) && l.status !== 'ok' && (
        <dl class="chain-details">
          {l.owner && <><dt>Owner</dt><dd class="chain-owner">{l.owner}</dd></>}
          {l.hint && <><dt>Look at</dt><dd class="chain-hint">{l.hint}</dd></>}
          {l.logs.length > 0 && <><dt>Logs</dt><dd class="chain-logs">{l.logs.map((x, i) => <>{i > 0 && ', '}<code>{x}</code></>)}</dd></>}
        </dl>
      )}
    </li>
  );
}

const errorText = (e: unknown) => (e instanceof Error ? e.message : String(e));

export function ChainView({ kind, namespace, name, get, watch, renderError }: ChainViewProps) {
  const [state, setState] = useState<ChainState | undefined>(undefined);
  useEffect(() => {
    const ac = new AbortController();
    setState(undefined);
    const live = new LiveChain({ get, watch, target: { kind, namespace, name }, onChange: setState,
      // kube-proxy's rules from the dashboard server, through the same get (the user's token).
      decorate: (g) => decorateForDashboard(g, get) });
    void live.run(ac.signal);
    return () => ac.abort();
  }, [kind, namespace, name, get, watch]);
  const model = useMemo(() => (state?.links ? chainModel(kind, state.links) : undefined), [state?.links, kind]);
  const what = `trace ${kind} ${namespace}/${name}`;
  const showError = (e: unknown) => (renderError ? renderError(e, what) : <div class="problem" role="alert">{errorText(e)}</div>);

  return (
    <section class="chain" aria-labelledby="chain-title" data-testid="chain" data-verdict={model?.verdict ?? 'loading'}
      data-first-broken={model?.firstBroken?.step ?? ''} data-gathers={state?.gathers ?? 0}>
      <h1 id="chain-title">Chain of {kind} <span class="chain-target">{namespace}/{name}</span></h1>
      {!state && <p class="loading">Gathering the chain…</p>}
      {state?.error !== undefined && !model && showError(state.error)}
      {model && (
        <>
          <p class={`chain-summary verdict-${model.verdict}`} role="status" aria-live="polite">{model.summary}</p>
          {state?.error !== undefined && <p class="chain-stale">The last update failed ({errorText(state.error)}); showing the chain as it was.</p>}
          <ol class="chain-links" aria-label={`Links of the chain of ${kind} ${namespace}/${name}`}>
            {model.links.map((l) => <LinkItem key={l.key} l={l} />)}
          </ol>
          <p class="chain-updated">
            Updated <time>{clock(state?.updatedAt)}</time>; live from watches of {state?.watching.length ?? 0} collections.
            The same rules as <code>mkctl trace {kind.toLowerCase()}/{name} -n {namespace}</code>.
          </p>
        </>
      )}
    </section>
  );
}
