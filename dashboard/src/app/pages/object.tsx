/**
 * Any object as YAML, live (a watch on its name), with edit → server-side apply: the edited YAML
 * is first applied with dryRun=All, the page shows the diff between the object now and the dry-run
 * result, and only "Apply" sends it for real (PATCH application/apply-patch+yaml, fieldManager
 * mk8s-dashboard, force: the user's edit wins over other managers, as kubectl apply
 * --server-side --force-conflicts).
 */
import { useState } from 'preact/hooks';
import yaml from 'js-yaml';
import { apiFetch, errorOf, type ApiError, type KubeObject } from '../api';
import { Problem, Section } from '../components';
import { chainRoute, collectionPath, objectPath, type ResourceRef } from '../discovery';
import { useLive } from '../hooks';
import { hunks, lineDiff } from '../line-diff';

export const FIELD_MANAGER = 'mk8s-dashboard';

/** The YAML shown: managedFields hidden (as kubectl get -o yaml does since 1.21). */
export function toYaml(o: KubeObject): string {
  const { managedFields: _m, ...metadata } = o.metadata;
  return yaml.dump({ ...o, metadata }, { noRefs: true, lineWidth: -1, sortKeys: false });
}

/** The text the editor starts from: what a user owns (no status, no server-set metadata). */
function editable(o: KubeObject): string {
  const { managedFields: _m, uid: _u, creationTimestamp: _c, resourceVersion: _r, ...metadata } = o.metadata as KubeObject['metadata'] & { generation?: number; selfLink?: string };
  const rest: Record<string, unknown> = { ...o, metadata };
  delete rest['status'];
  delete (rest['metadata'] as Record<string, unknown>)['generation'];
  return yaml.dump(rest, { noRefs: true, lineWidth: -1, sortKeys: false });
}

type Phase = { at: 'view' } | { at: 'edit'; text: string } | { at: 'review'; text: string; result: KubeObject } | { at: 'applied' };

export function ObjectPage({ r, namespace, name }: { r: ResourceRef; namespace: string | undefined; name: string }) {
  const live = useLive<KubeObject>({ path: collectionPath(r, namespace), query: { fieldSelector: `metadata.name=${name}` } });
  const obj = live.items.get(namespace ? `${namespace}/${name}` : name);
  const [phase, setPhase] = useState<Phase>({ at: 'view' });
  const [err, setErr] = useState<ApiError | undefined>();
  const [busy, setBusy] = useState(false);

  const apply = async (text: string, dryRun: boolean): Promise<KubeObject | undefined> => {
    setBusy(true); setErr(undefined);
    try {
      const q = new URLSearchParams({ fieldManager: FIELD_MANAGER, force: 'true', ...(dryRun ? { dryRun: 'All' } : {}) });
      const res = await apiFetch(`${objectPath(r, namespace, name)}?${q.toString()}`, { method: 'PATCH', body: text, headers: { 'Content-Type': 'application/apply-patch+yaml' } });
      if (!res.ok) { setErr(await errorOf(res)); return undefined; }
      return await res.json() as KubeObject;
    } finally { setBusy(false); }
  };

  if (live.error) return <Problem error={live.error} what={`read ${r.resource} ${namespace ? `${namespace}/` : ''}${name}`} />;
  if (!live.synced) return <p class="loading">Loading…</p>;
  if (!obj) return <p class="problem" role="alert"><strong>NotFound</strong>: {r.resource} "{name}" not found</p>;
  const kind = obj.kind ?? '';
  return (
    <Section title={`${kind} ${namespace ? `${namespace}/` : ''}${name}`}>
      <p class="toolbar">
        <a href={chainRoute(kind, namespace, name)}>chain</a>
        {kind === 'Pod' && <a href={`#/logs/${encodeURIComponent(namespace ?? '')}/${encodeURIComponent(name)}`}>logs</a>}
        {phase.at === 'view' || phase.at === 'applied'
          ? <button type="button" data-testid="edit" onClick={() => setPhase({ at: 'edit', text: editable(obj) })}>Edit</button>
          : <button type="button" onClick={() => { setPhase({ at: 'view' }); setErr(undefined); }}>Cancel</button>}
        {phase.at === 'applied' && <span class="ok" data-testid="applied">Applied</span>}
      </p>
      {err && <Problem error={err} what="apply" />}
      {phase.at === 'edit' && (
        <div class="editor">
          <textarea data-testid="yaml-editor" spellcheck={false} value={phase.text} onInput={(e) => setPhase({ at: 'edit', text: (e.target as HTMLTextAreaElement).value })} />
          <button type="button" data-testid="review" disabled={busy} onClick={async () => {
            const result = await apply(phase.text, true);
            if (result) setPhase({ at: 'review', text: phase.text, result });
          }}>Review changes (dry run)</button>
        </div>
      )}
      {phase.at === 'review' && (
        <div class="review">
          <h3>Changes the apply makes</h3>
          <Diff before={toYaml(obj)} after={toYaml(phase.result)} />
          <button type="button" data-testid="apply" disabled={busy} onClick={async () => { if (await apply(phase.text, false)) setPhase({ at: 'applied' }); }}>Apply</button>
          <button type="button" onClick={() => setPhase({ at: 'edit', text: phase.text })}>Back to edit</button>
        </div>
      )}
      {phase.at !== 'edit' && <pre class="yaml" data-testid="yaml">{toYaml(obj)}</pre>}
    </Section>
  );
}

function Diff({ before, after }: { before: string; after: string }) {
  const d = lineDiff(before, after);
  if (d.every((l) => l.op === ' ')) return <p data-testid="diff">No changes.</p>;
  return (
    <pre class="diff" data-testid="diff">
      {hunks(d).map((l, i) => <div key={i} class={l.op === '+' ? 'add' : l.op === '-' ? 'del' : l.op === '…' ? 'gap' : undefined}>{l.op === '…' ? '…' : `${l.op} ${l.text}`}</div>)}
    </pre>
  );
}
