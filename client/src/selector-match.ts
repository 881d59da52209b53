/**
 * Selector matching for the fake clientset, fake informers and client-side filtering. Delegates to
 * @mk8s/api's parsers, so fakes accept and reject exactly what the apiserver does.
 */
import { parseLabelSelector, selectionPredicate, type ResourceDescriptor } from '@mk8s/api';

/** Compiles a label selector string; '' matches everything. Throws ApiError BadRequest when unparsable. */
export function labelSelectorMatcher(selector: string | undefined): (labels: Readonly<Record<string, string>> | undefined) => boolean {
  const sel = parseLabelSelector(selector ?? '');
  return (labels) => sel.matches(labels ?? {});
}

/** One predicate for both selectors over objects of resource r (field names per the resource's selectable fields). */
export function objectMatcher(r: Pick<ResourceDescriptor, 'group' | 'resource' | 'namespaced'>, o: { labelSelector?: string | undefined; fieldSelector?: string | undefined }): (obj: unknown) => boolean {
  if (!o.labelSelector && !o.fieldSelector) return () => true;
  const p = selectionPredicate(r, o);
  return (obj) => p.matches(obj);
}
