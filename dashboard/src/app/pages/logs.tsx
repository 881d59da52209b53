/** A container's log, followed (GET pods/<name>/log?follow=true streams as the container writes). */
import { useEffect, useRef, useState } from 'preact/hooks';
import { apiFetch, apiJson, errorOf, type ApiError, type KubeObject } from '../api';
import { Problem, Section } from '../components';
import { chainRoute, objectRoute, R } from '../discovery';

interface Pod extends KubeObject { spec?: { containers?: { name: string }[]; initContainers?: { name: string }[] } }

/** Lines kept in the page (older ones drop off the top). */
const MAX_LINES = 5000;

export function LogsPage({ namespace, name, container }: { namespace: string; name: string; container?: string | undefined }) {
  const [pod, setPod] = useState<Pod | undefined>();
  const [error, setError] = useState<ApiError | undefined>();
  const [lines, setLines] = useState<string[]>([]);
  const [state, setState] = useState<'connecting' | 'following' | 'ended'>('connecting');
  const pre = useRef<HTMLPreElement>(null);
  const base = `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}`;

  useEffect(() => { apiJson<Pod>(apiFetch, base).then(setPod, (e: ApiError) => setError(e)); }, [base]);
  const containers = [...(pod?.spec?.initContainers ?? []), ...(pod?.spec?.containers ?? [])].map((c) => c.name);
  const chosen = container ?? pod?.spec?.containers?.[0]?.name;

  useEffect(() => {
    if (!chosen) return;
    const ac = new AbortController();
    setLines([]);
    setState('connecting');
    void (async () => {
      const res = await apiFetch(`${base}/log?follow=true&tailLines=1000&container=${encodeURIComponent(chosen)}`, { signal: ac.signal, headers: { Accept: '*/*' } });
      if (!res.ok) { setError(await errorOf(res)); return; }
      setState('following');
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      let partial = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        const parts = (partial + value).split('\n');
        partial = parts.pop() ?? '';
        if (parts.length) setLines((l) => { const n = l.concat(parts); return n.length > MAX_LINES ? n.slice(-MAX_LINES) : n; });
      }
      if (partial) setLines((l) => l.concat([partial]));
      setState('ended');
    })().catch(() => { if (!ac.signal.aborted) setState('ended'); });
    return () => ac.abort();
  }, [base, chosen]);

  useEffect(() => { const p = pre.current; if (p) p.scrollTop = p.scrollHeight; }, [lines]);
  if (error) return <Problem error={error} what={`read the log of pod ${namespace}/${name}`} />;
  return (
    <Section title={`Logs: ${namespace}/${name}`}>
      <p class="toolbar">
        {containers.map((c) => <a key={c} class={c === chosen ? 'current' : undefined} href={`#/logs/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}/${encodeURIComponent(c)}`}>{c}</a>)}
        <span class={`state ${state}`} data-testid="log-state">{state}</span>
        <a href={objectRoute(R.pods, namespace, name)}>yaml</a> <a href={chainRoute('Pod', namespace, name)}>chain</a>
      </p>
      <pre class="log" data-testid="log" ref={pre}>{lines.join('\n')}</pre>
    </Section>
  );
}
