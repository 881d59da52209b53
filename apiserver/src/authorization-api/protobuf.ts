/**
 * Access reviews in the Kubernetes protobuf wire format: `kubectl auth can-i` always sends protobuf
 * (its typed clientset forces it). The generic decoder does the work; this only checks the kind.
 */
import { ApiError } from '@mk8s/api';
import { decodeKubernetesProtobuf } from '../protobuf/decode.js';

const REVIEW_KINDS = new Set(['SelfSubjectAccessReview', 'SubjectAccessReview', 'LocalSubjectAccessReview']);

/** Decodes an access review (Self or Subject) to its JSON form; 400 for anything else. */
export function decodeAccessReview(body: Buffer): Record<string, unknown> {
  const obj = decodeKubernetesProtobuf(body);
  if (!REVIEW_KINDS.has(String(obj['kind']))) throw new ApiError('BadRequest', `expected an access review, got kind "${String(obj['kind'])}"`);
  return obj;
}
