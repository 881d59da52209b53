/**
 * Decodes a watch response body: newline-delimited JSON WatchEvents, split wherever the chunks
 * happen to break (mid-line, mid-UTF-8 sequence). An ERROR event throws the ApiError of its Status.
 */
import { ApiError, type ApiStatus, type WatchEvent } from '@mk8s/api';

/** Yields each complete line of text from a byte-chunk stream (the last line may lack '\n'). */
export async function* ndjsonLines(chunks: AsyncIterable<Uint8Array | string>): AsyncGenerator<string> {
  const dec = new TextDecoder();
  let buf = '';
  for await (const chunk of chunks) {
    buf += typeof chunk === 'string' ? chunk : dec.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl).trim();
      buf = buf.slice(nl + 1);
      if (line) yield line;
    }
  }
  buf += dec.decode();
  if (buf.trim()) yield buf.trim();
}

/** Yields WatchEvents; throws ApiError on an ERROR event (e.g. 410 Expired) and on undecodable lines. */
export async function* decodeWatchEvents<T>(chunks: AsyncIterable<Uint8Array | string>): AsyncGenerator<WatchEvent<T>> {
  for await (const line of ndjsonLines(chunks)) {
    let ev: WatchEvent<T>;
    try {
      ev = JSON.parse(line) as WatchEvent<T>;
    } catch {
      throw new ApiError('InternalError', `unable to decode watch event: ${line.slice(0, 200)}`);
    }
    if (ev.type === 'ERROR') {
      const st = ev.object as unknown as Partial<ApiStatus>;
      throw ApiError.fromStatus(st, st?.code ?? 500, 'watch error');
    }
    yield ev;
  }
}
