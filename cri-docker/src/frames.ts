/**
 * FrameDecoder splits Docker's multiplexed attach/logs stream (non-TTY) into stdout and stderr
 * frames: an 8-byte header [stream, 0, 0, 0, size uint32 BE] then size bytes. Chunks may split
 * headers and payloads anywhere, so it buffers.
 */
export interface Frame { stream: 'stdout' | 'stderr'; data: Buffer }

export class FrameDecoder {
  private buf: Buffer = Buffer.alloc(0);

  /** Adds bytes and returns every complete frame. */
  push(chunk: Buffer): Frame[] {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    const out: Frame[] = [];
    while (this.buf.length >= 8) {
      const size = this.buf.readUInt32BE(4);
      if (this.buf.length < 8 + size) break;
      const type = this.buf[0];
      const data = this.buf.subarray(8, 8 + size);
      this.buf = this.buf.subarray(8 + size);
      if (size > 0) out.push({ stream: type === 2 ? 'stderr' : 'stdout', data: Buffer.from(data) });
    }
    return out;
  }

  /** Bytes of an incomplete frame still held. */
  get pending(): number { return this.buf.length; }
}
