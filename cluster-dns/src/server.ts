/**
 * DnsServer: UDP and TCP listeners on one port, each message answered by respond() from the
 * record store. Names outside the zones are answered at once (REFUSED), or, with an upstream,
 * relayed to it as they came (the forward plugin's role); no other traffic leaves the process.
 * TCP carries length-prefixed messages (RFC 7766), several per connection, closed after 10 s idle.
 */
import { createSocket, type Socket } from 'node:dgram';
import { createServer, type Server, type Socket as TcpSocket } from 'node:net';
import type { Logger } from '@mk8s/component-base';
import type { RecordStore } from './record-store.js';
import { respond, type Response } from './respond.js';
import { COUNTED_TYPES, type DnsMetrics } from './metrics.js';

export interface DnsServerOptions {
  store: RecordStore;
  /** 0 picks a free port (the same for UDP and TCP). */
  port: number;
  /** @default '0.0.0.0' */
  host?: string;
  /** "ip:port" to relay out-of-zone queries to; none: REFUSED at once. */
  upstream?: string;
  /** @default 2000 */
  upstreamTimeoutMs?: number;
  metrics?: DnsMetrics;
  logger: Logger;
}

const TCP_IDLE_MS = 10_000;

export class DnsServer {
  private udp?: Socket;
  private tcp?: Server;
  private readonly conns = new Set<TcpSocket>();
  private readonly server: string;
  private readonly zone: string;
  private readonly counted = new Map<string, { inc(): void }>();

  constructor(private readonly o: DnsServerOptions) {
    this.server = `dns://${o.host ?? '0.0.0.0'}:${o.port}`;
    this.zone = `${o.store.zone}.`;
  }

  /** Binds both listeners; resolves with the port. */
  async listen(): Promise<number> {
    const host = this.o.host ?? '0.0.0.0';
    const udp = createSocket({ type: host.includes(':') ? 'udp6' : 'udp4', reuseAddr: false });
    this.udp = udp;
    await new Promise<void>((resolve, reject) => { udp.once('error', reject); udp.bind(this.o.port, host, () => { udp.off('error', reject); resolve(); }); });
    const port = udp.address().port;
    udp.on('error', (err) => this.o.logger.warn({ err }, 'UDP socket error'));
    udp.on('message', (msg, rinfo) => {
      void this.handle(msg, 'udp', rinfo.family).then((wire) => { if (wire) udp.send(wire, rinfo.port, rinfo.address); });
    });
    const tcp = createServer((sock) => this.serveTcp(sock));
    this.tcp = tcp;
    await new Promise<void>((resolve, reject) => { tcp.once('error', reject); tcp.listen(port, host, () => { tcp.off('error', reject); resolve(); }); });
    return port;
  }

  private serveTcp(sock: TcpSocket): void {
    this.conns.add(sock);
    sock.setTimeout(TCP_IDLE_MS, () => sock.destroy());
    sock.on('close', () => this.conns.delete(sock));
    sock.on('error', () => sock.destroy());
    let pending = Buffer.alloc(0);
    sock.on('data', (chunk) => {
      pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      while (pending.length >= 2) {
        const len = pending.readUInt16BE(0);
        if (pending.length < 2 + len) break;
        const msg = pending.subarray(2, 2 + len);
        pending = pending.subarray(2 + len);
        void this.handle(msg, 'tcp', sock.remoteFamily ?? 'IPv4').then((wire) => {
          if (!wire || sock.destroyed) return;
          const head = Buffer.alloc(2); head.writeUInt16BE(wire.length);
          sock.write(Buffer.concat([head, wire]));
        });
      }
    });
  }

  /** One message: the response to send, or undefined to drop it. */
  async handle(msg: Buffer, proto: 'udp' | 'tcp', family: string): Promise<Buffer | undefined> {
    const t0 = performance.now();
    const r: Response | undefined = respond(msg, { store: this.o.store, transport: proto, recursionAvailable: !!this.o.upstream });
    if (!r) return undefined;
    let wire = r.wire;
    let rcode: string = r.rcode;
    let zone = r.forwardable ? '.' : this.zone;
    if (r.forwardable && this.o.upstream) {
      const fwd = await this.forward(msg, proto);
      if (fwd) { wire = fwd; rcode = rcodeOf(fwd); } else { rcode = 'SERVFAIL'; wire = servfail(r.wire); }
    } else if (r.forwardable) zone = '.';
    const m = this.o.metrics;
    if (m) {
      const type = COUNTED_TYPES.has(r.qtype) ? r.qtype : 'other';
      const fam = family === 'IPv6' || family === '6' ? '2' : '1';
      this.child(`q|${zone}|${proto}|${fam}|${type}`, () => m.requests.labels(this.server, zone, proto, fam, type)).inc();
      this.child(`r|${zone}|${rcode}`, () => m.responses.labels(this.server, zone, rcode, r.forwardable && this.o.upstream ? 'forward' : 'kubernetes')).inc();
      m.duration.labels(this.server, zone, type).observe((performance.now() - t0) / 1000);
    }
    return wire;
  }

  /** prom-client label children, looked up once per label set (a query should not hash labels). */
  private child(key: string, make: () => { inc(): void }): { inc(): void } {
    let c = this.counted.get(key);
    if (!c) { c = make(); this.counted.set(key, c); }
    return c;
  }

  /** Relays msg to the upstream over UDP (TCP queries too: the reply is re-framed by the caller). */
  private forward(msg: Buffer, _proto: 'udp' | 'tcp'): Promise<Buffer | undefined> {
    const [host = '', portText = '53'] = splitHostPort(this.o.upstream ?? '');
    this.o.metrics?.forwardRequests.labels(this.o.upstream ?? '').inc();
    return new Promise((resolve) => {
      const s = createSocket(host.includes(':') ? 'udp6' : 'udp4');
      const done = (b?: Buffer) => { clearTimeout(timer); s.close(); resolve(b); };
      const timer = setTimeout(() => done(), this.o.upstreamTimeoutMs ?? 2000);
      s.on('error', () => done());
      s.on('message', (b) => { if (b.length >= 2 && b.readUInt16BE(0) === msg.readUInt16BE(0)) done(b); });
      s.send(msg, Number(portText), host);
    });
  }

  async close(): Promise<void> {
    for (const c of this.conns) c.destroy();
    await Promise.all([
      new Promise<void>((r) => (this.udp ? this.udp.close(() => r()) : r())),
      new Promise<void>((r) => (this.tcp ? this.tcp.close(() => r()) : r())),
    ]);
  }
}

const RCODE_NAMES = ['NOERROR', 'FORMERR', 'SERVFAIL', 'NXDOMAIN', 'NOTIMP', 'REFUSED'];
const rcodeOf = (wire: Buffer) => (wire.length >= 4 ? RCODE_NAMES[wire.readUInt16BE(2) & 0xf] ?? 'other' : 'other');

/** The response r turned into SERVFAIL (upstream gave no answer). */
function servfail(wire: Buffer): Buffer {
  const b = Buffer.from(wire);
  b.writeUInt16BE((b.readUInt16BE(2) & ~0xf) | 2, 2);
  return b;
}

/** "1.2.3.4:53", "[::1]:53" or a bare host (port 53). */
export function splitHostPort(s: string): [string, string] {
  const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(s);
  if (v6) return [v6[1]!, v6[2] ?? '53'];
  const i = s.lastIndexOf(':');
  if (i > 0 && s.indexOf(':') === i) return [s.slice(0, i), s.slice(i + 1)];
  return [s, '53'];
}
