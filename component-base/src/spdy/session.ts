/**
 * A server-side SPDY/3.1 session over any byte Duplex (a raw upgraded socket, or the byte stream
 * kubectl tunnels through binary WebSocket messages). It plays the role of moby/spdystream's
 * Connection on the kubelet side: the peer opens streams, the session answers each with a
 * SYN_REPLY and hands it to `onStream` as a Node Duplex; it echoes PINGs and ignores SETTINGS and
 * WINDOW_UPDATE (spdystream does no flow control either). Opening streams from this side is not
 * implemented: nothing in mk8s needs it.
 */
import { EventEmitter } from 'node:events';
import { Duplex } from 'node:stream';
import { encodeFrame, FrameParser, MAX_FRAME_PAYLOAD, RST, type Frame } from './frames.js';
import { HeaderCompressor, HeaderDecompressor, type SpdyHeaders } from './headers.js';

/** Largest DATA payload this side sends; keeps one busy stream from starving the others. */
const DATA_CHUNK = Math.min(64 * 1024, MAX_FRAME_PAYLOAD);

export interface SpdySessionOptions {
  /** The connection, already past any HTTP upgrade. The session owns it from now on. */
  transport: Duplex;
  /**
   * Called once per stream the peer opens, after its SYN_REPLY is queued (so anything the handler
   * writes follows the reply). Runs synchronously in frame order: a handler that pairs streams
   * (port-forward's error + data) sees them in the order the peer opened them. To refuse a stream,
   * call `stream.reset()`. A throw resets the stream with INTERNAL_ERROR.
   */
  onStream: (stream: SpdyStream) => void;
}

/**
 * One SPDY stream as a Duplex: readable = the peer's DATA (ends on its FIN), writable = DATA to
 * the peer (`end()` sends FIN). It never emits 'error' (a reset or a dead session just closes
 * it), so it is safe to pipe without error listeners; watch 'close' to tear down what it feeds.
 * Like any Duplex it closes only once its readable side is consumed: `resume()` a stream you
 * do not read.
 */
export class SpdyStream extends Duplex {
  /** True once the peer reset the stream or the session died before both sides finished. */
  aborted = false;

  constructor(private readonly session: SpdySession, readonly id: number, readonly headers: SpdyHeaders) {
    super({ allowHalfOpen: true });
  }

  override _read(): void { this.session.unblock(this); }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    this.session.sendData(this.id, chunk, false, cb);
  }

  override _final(cb: (err?: Error | null) => void): void {
    this.session.sendData(this.id, Buffer.alloc(0), true, cb);
  }

  override _destroy(_err: Error | null, cb: (err?: Error | null) => void): void {
    this.session.unblock(this);
    // A stream torn down before both halves closed cleanly tells the peer to stop.
    if (!this.aborted && !(this.writableFinished && this.readableEnded)) this.session.sendReset(this.id, RST.CANCEL);
    this.session.forget(this.id);
    cb(null);
  }

  /** Aborts the stream with RST_STREAM (default CANCEL). Idempotent. */
  reset(status: number = RST.CANCEL): void {
    if (this.destroyed) return;
    this.aborted = true;
    this.session.sendReset(this.id, status);
    this.destroy();
  }

  /** @internal frame delivery from the session */
  deliver(data: Buffer, fin: boolean): void {
    if (this.readableEnded || this.destroyed) return;
    // A full buffer pauses the whole transport until this stream is read again: SPDY's own
    // flow control is not used (spdystream ignores it), so TCP's is the only brake there is.
    if (data.length && !this.push(data)) this.session.block(this);
    if (fin) this.push(null);
  }

  /** @internal the peer reset the stream, or the session died */
  abort(): void {
    if (this.destroyed) return;
    this.aborted = true;
    this.destroy();
  }
}

/**
 * Events: 'close' once the transport is gone and every stream is destroyed; 'protocolError'
 * (err) before a close caused by a malformed frame or header block.
 */
export class SpdySession extends EventEmitter {
  private readonly parser = new FrameParser();
  private readonly compressor = new HeaderCompressor();
  private readonly decompressor = new HeaderDecompressor();
  private readonly streams = new Map<number, SpdyStream>();
  private readonly queue: Frame[] = [];
  private decoding = false;
  private lastPeerStreamId = 0;
  private drainWaiters: (() => void)[] = [];
  /** Streams whose readable buffer is full; the transport is paused while any exist. */
  private readonly blocked = new Set<SpdyStream>();
  private closed = false;
  private readonly transport: Duplex;
  private readonly onStream: (s: SpdyStream) => void;

  constructor(o: SpdySessionOptions) {
    super();
    this.transport = o.transport;
    this.onStream = o.onStream;
    this.transport.on('data', (chunk: Buffer) => {
      let frames: Frame[];
      try { frames = this.parser.push(chunk); } catch (err) { this.fail(err as Error); return; }
      for (const f of frames) this.queue.push(f);
      this.pump();
    });
    this.transport.on('drain', () => { const w = this.drainWaiters; this.drainWaiters = []; for (const f of w) f(); });
    this.transport.on('error', () => this.shutdown());
    this.transport.on('end', () => this.shutdown());
    this.transport.on('close', () => this.shutdown());
  }

  /** Number of open streams (for tests and metrics). */
  get streamCount(): number { return this.streams.size; }

  /** Sends GOAWAY and closes the transport; open streams are aborted. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.writeFrame({ type: 'goaway', lastGoodStreamId: this.lastPeerStreamId, status: 0 });
    this.shutdown(false);
  }

  /** @internal */
  sendData(streamId: number, data: Buffer, fin: boolean, cb: (err?: Error | null) => void): void {
    // After the transport is gone, writes vanish quietly: the stream is being aborted anyway.
    if (this.closed) { cb(); return; }
    let ok = true;
    for (let off = 0; off < data.length; off += DATA_CHUNK) {
      const last = off + DATA_CHUNK >= data.length;
      ok = this.writeFrame({ type: 'data', streamId, fin: fin && last, data: data.subarray(off, off + DATA_CHUNK) });
    }
    if (data.length === 0) ok = this.writeFrame({ type: 'data', streamId, fin, data });
    if (ok) cb(); else this.drainWaiters.push(() => cb());
  }

  /** @internal */
  sendReset(streamId: number, status: number): void {
    this.writeFrame({ type: 'rst_stream', streamId, status });
  }

  /** @internal */
  block(s: SpdyStream): void {
    this.blocked.add(s);
    if (this.blocked.size === 1) this.transport.pause();
  }

  /** @internal */
  unblock(s: SpdyStream): void {
    if (this.blocked.delete(s) && this.blocked.size === 0 && !this.closed) this.transport.resume();
  }

  /** @internal */
  forget(streamId: number): void {
    this.streams.delete(streamId);
  }

  private writeFrame(f: Frame): boolean {
    if (this.closed || !this.transport.writable) return true;
    return this.transport.write(encodeFrame(f));
  }

  // Frames are handled strictly in arrival order; a header block needs an async inflate, during
  // which later frames (e.g. DATA for the stream being opened) wait in the queue.
  private pump(): void {
    while (!this.decoding && !this.closed && this.queue.length) {
      const f = this.queue.shift()!;
      if (f.type === 'syn_stream' || f.type === 'syn_reply' || f.type === 'headers') {
        this.decoding = true;
        this.decompressor.decompress(f.headerBlock).then((h) => {
          this.decoding = false;
          if (f.type === 'syn_stream') this.openPeerStream(f.streamId, f.fin, h);
          this.pump();
        }, (err: Error) => this.fail(err));
        return;
      }
      this.handle(f);
    }
  }

  private handle(f: Frame): void {
    switch (f.type) {
      case 'data': {
        const s = this.streams.get(f.streamId);
        if (s) s.deliver(f.data, f.fin);
        else if (f.streamId > this.lastPeerStreamId) this.sendReset(f.streamId, RST.INVALID_STREAM);
        // DATA for a stream closed a moment ago is normal at teardown: drop it.
        return;
      }
      case 'rst_stream':
        this.streams.get(f.streamId)?.abort();
        return;
      case 'ping':
        // Only the peer's pings (odd ids, as it is the client) are echoed; even ids would be ours.
        if (f.id % 2 === 1) this.writeFrame(f);
        return;
      case 'goaway':
        // The peer opens no more streams; the open ones finish and the peer then closes the socket.
        return;
      default:
        // SETTINGS, WINDOW_UPDATE, unknown control frames: nothing to do (no flow control).
        return;
    }
  }

  private openPeerStream(id: number, fin: boolean, headers: SpdyHeaders): void {
    if (id <= this.lastPeerStreamId || id % 2 === 0) { this.sendReset(id, RST.PROTOCOL_ERROR); return; }
    this.lastPeerStreamId = id;
    const s = new SpdyStream(this, id, headers);
    this.streams.set(id, s);
    this.writeFrame({ type: 'syn_reply', streamId: id, fin: false, headerBlock: this.compressor.compress({}) });
    if (fin) s.deliver(Buffer.alloc(0), true);
    try { this.onStream(s); } catch { s.reset(RST.INTERNAL_ERROR); }
  }

  private fail(err: Error): void {
    if (this.closed) return;
    this.emit('protocolError', err);
    this.writeFrame({ type: 'goaway', lastGoodStreamId: this.lastPeerStreamId, status: 1 });
    this.shutdown(false);
  }

  /** Aborts every stream; `destroy` false ends the transport gracefully so a GOAWAY still flushes. */
  private shutdown(destroy = true): void {
    if (this.closed) return;
    this.closed = true;
    this.queue.length = 0;
    for (const s of [...this.streams.values()]) s.abort();
    this.streams.clear();
    const w = this.drainWaiters;
    this.drainWaiters = [];
    for (const f of w) f();
    this.decompressor.close();
    if (destroy) this.transport.destroy(); else this.transport.end();
    this.emit('close');
  }
}
