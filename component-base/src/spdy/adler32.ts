/** Adler-32 (RFC 1950 §9): the zlib DICTID that names the SPDY dictionary. */
export const Adler32 = {
  of(b: Uint8Array): number {
    let a = 1;
    let s = 0;
    // 5552 is the largest run that cannot overflow before the modulo (zlib's NMAX).
    for (let i = 0; i < b.length; i += 5552) {
      const end = Math.min(i + 5552, b.length);
      for (let j = i; j < end; j++) { a += b[j]!; s += a; }
      a %= 65521;
      s %= 65521;
    }
    return ((s << 16) | a) >>> 0;
  },
};
