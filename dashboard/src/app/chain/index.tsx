/**
 * Placeholder for the chain view (issue 22): the "chain" change replaces this file with the view
 * that draws the object's chain from the shared diagnosis library of `mkctl trace`.
 */
import type { ApiFetch } from '../api';

export interface ChainViewProps { kind: string; namespace: string; name: string; api: ApiFetch }

export function ChainView({ kind, namespace, name }: ChainViewProps) {
  return (
    <section class="chain" data-testid="chain">
      <h2>Chain: {kind} {namespace ? `${namespace}/` : ''}{name}</h2>
      <p class="loading">The chain view is not built yet; meanwhile: <code>mkctl trace {kind.toLowerCase()}/{name}{namespace ? ` -n ${namespace}` : ''}</code></p>
    </section>
  );
}
