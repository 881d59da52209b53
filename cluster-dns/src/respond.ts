/**
 * respond: one DNS message in, one out, from the record store alone (no I/O; the server adds the
 * transport, metrics and forwarding). Handles the header (opcode, RD, AA), EDNS0 (OPT echoed with
 * our payload size; BADVERS for a version above 0) and UDP truncation: an answer larger than the
 * client's limit (512 bytes, or its EDNS0 size) goes out empty with TC set, so the client retries
 * over TCP (RFC 1035 4.2.1, RFC 6891).
 */
import dnsPacket, { type Answer, type DecodedPacket, type Packet } from 'dns-packet';
import type { LookupResult, Rcode, RecordStore } from './record-store.js';

const { AUTHORITATIVE_ANSWER, TRUNCATED_RESPONSE, RECURSION_AVAILABLE } = dnsPacket;
const OPCODE_MASK = 0x7800;
const RD = 0x0100;
const CD = 0x0010;
/** What we announce and accept over UDP with EDNS0 (the DNS flag day 2020 value). */
export const EDNS_UDP_SIZE = 1232;
const RCODES: Record<string, number> = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4, REFUSED: 5 };

export interface Response {
  /** The encoded message. */
  wire: Buffer;
  rcode: Rcode | 'FORMERR' | 'NOTIMP' | 'BADVERS';
  /** The question's type ("other" when there is none), for metrics. */
  qtype: string;
  /** Set when the question is outside the zones served: the caller may forward the query instead. */
  forwardable: boolean;
  truncated: boolean;
}

export interface RespondOptions {
  store: RecordStore;
  transport: 'udp' | 'tcp';
  /** Set the RA bit (a forwarder is configured). @default false */
  recursionAvailable?: boolean;
}

/** The header id of a message too broken to decode (FORMERR needs it), or undefined. */
const rawId = (buf: Buffer) => (buf.length >= 2 ? buf.readUInt16BE(0) : undefined);

function encodeOrTruncate(p: Packet, limit: number | undefined): { wire: Buffer; truncated: boolean } {
  const wire = dnsPacket.encode(p);
  if (limit === undefined || wire.length <= limit) return { wire, truncated: false };
  const opt = (p.additionals ?? []).filter((a) => a.type === 'OPT');
  return { wire: dnsPacket.encode({ ...p, flags: (p.flags ?? 0) | TRUNCATED_RESPONSE, answers: [], authorities: [], additionals: opt }), truncated: true };
}

/** Answers one query message. Returns undefined for a message to drop (a response, or too short to carry an id). */
export function respond(buf: Buffer, o: RespondOptions): Response | undefined {
  let q: DecodedPacket;
  try {
    q = dnsPacket.decode(buf);
  } catch {
    const id = rawId(buf);
    if (id === undefined || buf.length < 12 || (buf.readUInt16BE(2) & 0x8000)) return undefined;
    return { wire: dnsPacket.encode({ id, type: 'response', flags: RCODES['FORMERR']!, questions: [] }), rcode: 'FORMERR', qtype: 'other', forwardable: false, truncated: false };
  }
  if (q.type === 'response') return undefined;
  const question = q.questions?.[0];
  const qtype = question?.type ?? 'other';
  const opt = (q.additionals ?? []).find((a) => a.type === 'OPT') as (Answer & { udpPayloadSize?: number; ednsVersion?: number; flags?: number }) | undefined;
  const limit = o.transport === 'tcp' ? undefined : opt ? Math.max(512, Math.min(opt.udpPayloadSize ?? 512, EDNS_UDP_SIZE)) : 512;
  const replyOpt: Answer[] = opt ? [{ type: 'OPT', name: '.', udpPayloadSize: EDNS_UDP_SIZE, extendedRcode: 0, ednsVersion: 0, flags: 0, options: [] } as unknown as Answer] : [];
  const baseFlags = (q.flags ?? 0) & (OPCODE_MASK | RD | CD) | (o.recursionAvailable ? RECURSION_AVAILABLE : 0);
  const reply = (rcode: string, extra: Partial<Packet> = {}): Packet => ({
    id: q.id ?? 0, type: 'response', questions: q.questions ?? [], answers: [], authorities: [], additionals: replyOpt, ...extra,
    flags: baseFlags | (RCODES[rcode] ?? 0) | (extra.flags ?? 0),
  });
  if (opt && (opt.ednsVersion ?? 0) > 0) {
    // BADVERS is extended rcode 16: upper 8 bits (1) in the OPT record, lower 4 (0) in the header.
    const bad = { ...(replyOpt[0] as object), extendedRcode: 1 } as unknown as Answer;
    return { wire: dnsPacket.encode(reply('NOERROR', { additionals: [bad] })), rcode: 'BADVERS', qtype, forwardable: false, truncated: false };
  }
  if ((((q.flags ?? 0) & OPCODE_MASK) >> 11) !== 0) return { wire: dnsPacket.encode(reply('NOTIMP')), rcode: 'NOTIMP', qtype, forwardable: false, truncated: false };
  if (!question || (q.questions?.length ?? 0) !== 1) return { wire: dnsPacket.encode(reply('FORMERR')), rcode: 'FORMERR', qtype, forwardable: false, truncated: false };
  const r: LookupResult = o.store.lookup(question.name, question.type);
  // Owner names as the question spelled them (case preserved for 0x20-style clients).
  const asked = question.name.replace(/\.$/, '');
  const own = (a: Answer) => (a.name.toLowerCase() === asked.toLowerCase() && a.name !== asked ? { ...a, name: asked } : a);
  const p = reply(r.rcode, {
    flags: r.authoritative ? AUTHORITATIVE_ANSWER : 0,
    answers: r.answers.map(own), authorities: r.authority, additionals: [...r.additionals, ...replyOpt],
  });
  const { wire, truncated } = encodeOrTruncate(p, limit);
  return { wire, rcode: r.rcode, qtype, forwardable: !r.authoritative, truncated };
}
