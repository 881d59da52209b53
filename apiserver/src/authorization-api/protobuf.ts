/**
 * Just enough of the Kubernetes protobuf wire format to read a SelfSubjectAccessReview or
 * SubjectAccessReview: `kubectl auth can-i` always sends protobuf (its typed clientset forces it).
 * Envelope: 4 magic bytes `k8s\0`, then runtime.Unknown{typeMeta=1{apiVersion=1,kind=2}, raw=2}.
 */
import { ApiError } from '@mk8s/api';

const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

type Fields = Map<number, Buffer[]>;

/** Reads length-delimited and varint fields of one message; other wire types are skipped. */
function readMessage(buf: Buffer): Fields {
  const out: Fields = new Map();
  let i = 0;
  const varint = (): number => {
    let v = 0; let shift = 0;
    for (;;) {
      if (i >= buf.length || shift > 49) throw bad();
      const b = buf[i++]!;
      v += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) return v;
      shift += 7;
    }
  };
  while (i < buf.length) {
    const key = varint();
    const fieldNo = Math.floor(key / 8); const wire = key & 7;
    if (wire === 2) {
      const len = varint();
      if (i + len > buf.length) throw bad();
      const list = out.get(fieldNo) ?? [];
      list.push(buf.subarray(i, i + len));
      out.set(fieldNo, list);
      i += len;
    } else if (wire === 0) {
      const v = varint();
      const list = out.get(fieldNo) ?? [];
      list.push(Buffer.from(String(v)));
      out.set(fieldNo, list);
    } else if (wire === 1) i += 8;
    else if (wire === 5) i += 4;
    else throw bad();
  }
  return out;
}

const bad = () => new ApiError('BadRequest', 'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf');
const str = (f: Fields, n: number): string | undefined => f.get(n)?.[0]?.toString('utf8');
const msg = (f: Fields, n: number): Fields | undefined => { const b = f.get(n)?.[0]; return b ? readMessage(b) : undefined; };

/** Decodes an access review (Self or Subject) to its JSON form. */
export function decodeAccessReview(body: Buffer): Record<string, unknown> {
  if (body.length < 4 || !body.subarray(0, 4).equals(MAGIC)) throw bad();
  const unknown = readMessage(body.subarray(4));
  const typeMeta = msg(unknown, 1);
  const raw = unknown.get(2)?.[0];
  if (!typeMeta || !raw) throw bad();
  const kind = str(typeMeta, 2) ?? '';
  const review = readMessage(raw);
  const spec: Fields = msg(review, 2) ?? new Map();
  const out: Record<string, unknown> = {};
  const ra = msg(spec, 1); const nra = msg(spec, 2);
  if (ra) {
    const attrs: Record<string, string> = {};
    const names = ['', 'namespace', 'verb', 'group', 'version', 'resource', 'subresource', 'name'];
    for (let n = 1; n < names.length; n++) { const v = str(ra, n); if (v !== undefined) attrs[names[n]!] = v; }
    out['resourceAttributes'] = attrs;
  }
  if (nra) out['nonResourceAttributes'] = { ...(str(nra, 1) !== undefined ? { path: str(nra, 1) } : {}), ...(str(nra, 2) !== undefined ? { verb: str(nra, 2) } : {}) };
  if (kind === 'SubjectAccessReview') {
    // SubjectAccessReviewSpec: 1 resourceAttributes, 2 nonResourceAttributes, 3 user, 4 groups, 5 extra, 6 uid.
    const user = str(spec, 3); if (user !== undefined) out['user'] = user;
    const groups = (spec.get(4) ?? []).map((b) => b.toString('utf8')); if (groups.length) out['groups'] = groups;
    const uid = str(spec, 6); if (uid !== undefined) out['uid'] = uid;
  }
  return { apiVersion: str(typeMeta, 1) ?? 'authorization.k8s.io/v1', kind, spec: out };
}
