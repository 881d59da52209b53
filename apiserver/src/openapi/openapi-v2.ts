/**
 * A minimal OpenAPI v2 document in gnostic's protobuf encoding (openapi_v2.Document).
 *
 * Why: kubectl validates a `kind: List` manifest client-side (the server-side fieldValidation
 * check does not cover the List kind), and that path needs /openapi/v2, which client-go only
 * fetches as protobuf; a 404 makes `kubectl create -f list.yaml` fail outright. A document without
 * definitions parses, finds no schema for any item, and skips client-side validation; the items
 * are then sent one by one with fieldValidation=Strict and validated by the server. Every other
 * kubectl path that reads v2 (apply's patch computation fallback) treats "no schema" like a 404.
 */
/** What client-go asks for. */
export const OPENAPI_V2_PROTOBUF = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';
/** What kube-openapi answers with: the `@` is not a valid media type character, so it uses a dot. */
export const OPENAPI_V2_PROTOBUF_RESPONSE = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';

/** Whether an Accept header asks for the protobuf v2 document (either spelling). */
export function wantsOpenApiV2Protobuf(accept: string | undefined): boolean {
  return !!accept && (accept.includes(OPENAPI_V2_PROTOBUF) || accept.includes(OPENAPI_V2_PROTOBUF_RESPONSE));
}

function varint(n: number): number[] {
  const out: number[] = [];
  do { let b = n & 0x7f; n >>>= 7; if (n) b |= 0x80; out.push(b); } while (n);
  return out;
}

/** A length-delimited (wire type 2) field. */
function field(num: number, body: Uint8Array | string): number[] {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  return [...varint((num << 3) | 2), ...varint(bytes.length), ...bytes];
}

let cached: Buffer | undefined;

/** Document{swagger: "2.0", info: {title, version}, paths: {}}. */
export function minimalOpenApiV2Protobuf(): Buffer {
  if (cached) return cached;
  const info = Uint8Array.from([...field(1, 'Kubernetes'), ...field(2, 'v1.32.0-mk8s')]);
  cached = Buffer.from([...field(1, '2.0'), ...field(2, info), ...field(8, new Uint8Array(0))]);
  return cached;
}
