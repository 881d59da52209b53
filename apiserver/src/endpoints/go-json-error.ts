/**
 * The message Go's encoding/json gives for malformed JSON (its scanner's SyntaxError), so decode
 * errors read as upstream's: `invalid character 'x' looking for beginning of value`,
 * `unexpected end of JSON input`. Only called after JSON.parse failed; a small re-scan of the
 * bytes in Go's states (encoding/json scanner.go), not a parser.
 */

/** Go's quoteChar: the offending byte as Go prints it. */
function quoteChar(c: number): string {
  if (c === 0x27) return `'\\''`;
  if (c === 0x22) return `'"'`;
  const s = JSON.stringify(String.fromCharCode(c)).slice(1, -1);
  // Go's strconv.Quote writes control bytes as \x01 (\n, \t, \r as themselves escaped).
  const go = /^\\u00([0-9a-f]{2})$/i.exec(s);
  return `'${go ? `\\x${go[1]!.toLowerCase()}` : s}'`;
}

class Syntax extends Error {}
const fail = (c: number | undefined, context: string): never => {
  throw new Syntax(c === undefined ? 'unexpected end of JSON input' : `invalid character ${quoteChar(c)} ${context}`);
};

const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
const isDigit = (c: number | undefined) => c !== undefined && c >= 0x30 && c <= 0x39;
const isHex = (c: number | undefined) => c !== undefined && /[0-9a-fA-F]/.test(String.fromCharCode(c));

/** goJsonSyntaxError returns Go's error text for text, or undefined when Go would accept it. */
export function goJsonSyntaxError(text: string | Buffer): string | undefined {
  const b = Buffer.isBuffer(text) ? text : Buffer.from(text, 'utf8');
  let i = 0;
  const peek = () => b[i];
  const skip = () => { while (i < b.length && isSpace(b[i]!)) i++; };

  const value = (): void => {
    skip();
    const c = peek();
    if (c === undefined) return fail(undefined, '');
    if (c === 0x7b) { i++; return object(); }
    if (c === 0x5b) { i++; return array(); }
    if (c === 0x22) { i++; return string(); }
    if (c === 0x2d || isDigit(c)) return number();
    for (const lit of ['true', 'false', 'null']) {
      if (c === lit.charCodeAt(0)) {
        i++;
        for (let k = 1; k < lit.length; k++, i++) {
          if (b[i] !== lit.charCodeAt(k)) fail(b[i], `in literal ${lit} (expecting '${lit[k]}')`);
        }
        return;
      }
    }
    return fail(c, 'looking for beginning of value');
  };
  const object = (): void => {
    skip();
    if (peek() === 0x7d) { i++; return; }
    for (;;) {
      skip();
      if (peek() !== 0x22) fail(peek(), 'looking for beginning of object key string');
      i++; string();
      skip();
      if (peek() !== 0x3a) fail(peek(), 'after object key');
      i++; value(); skip();
      const c = peek();
      if (c === 0x2c) { i++; continue; }
      if (c === 0x7d) { i++; return; }
      fail(c, 'after object key:value pair');
    }
  };
  const array = (): void => {
    skip();
    if (peek() === 0x5d) { i++; return; }
    for (;;) {
      value(); skip();
      const c = peek();
      if (c === 0x2c) { i++; continue; }
      if (c === 0x5d) { i++; return; }
      fail(c, 'after array element');
    }
  };
  const string = (): void => {
    for (;;) {
      const c = peek();
      if (c === undefined) fail(undefined, '');
      i++;
      if (c === 0x22) return;
      if (c! < 0x20) fail(c, 'in string literal');
      if (c === 0x5c) {
        const e = peek();
        if (e === undefined) fail(undefined, '');
        i++;
        if (e === 0x75) {
          for (let k = 0; k < 4; k++, i++) if (!isHex(b[i])) fail(b[i], 'in \\u hexadecimal character escape');
        } else if (!'"\\/bfnrt'.includes(String.fromCharCode(e!))) fail(e, 'in string escape code');
      }
    }
  };
  const number = (): void => {
    if (peek() === 0x2d) { i++; if (!isDigit(peek())) fail(peek(), 'in numeric literal'); }
    if (peek() === 0x30) i++; else while (isDigit(peek())) i++;
    if (peek() === 0x2e) { i++; if (!isDigit(peek())) fail(peek(), 'after decimal point in numeric literal'); while (isDigit(peek())) i++; }
    if (peek() === 0x65 || peek() === 0x45) {
      i++;
      if (peek() === 0x2b || peek() === 0x2d) i++;
      if (!isDigit(peek())) fail(peek(), 'in exponent of numeric literal');
      while (isDigit(peek())) i++;
    }
  };

  try {
    value();
    skip();
    if (i < b.length) fail(b[i], 'after top-level value');
    return undefined;
  } catch (err) {
    if (err instanceof Syntax) return err.message;
    throw err;
  }
}

/** upstream summarizeData(body, 30): a JSON-looking body as text, anything else as hex. */
export function summarizeBody(data: Buffer, maxLength = 30): string {
  if (data.length === 0) return '<empty>';
  const head = data.subarray(0, maxLength);
  const more = data.length > maxLength ? ' ...' : '';
  return data[0] === 0x7b ? head.toString('utf8') + more : head.toString('hex') + more;
}
