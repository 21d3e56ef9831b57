/** Reads whole UTF-8 sequences only: a byte that starts none is written `%XX` instead of U+FFFD. */
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const HEX_PAIR = /^[0-9A-Fa-f]{2}$/;

/** Options of {@link decodeKeyText}. */
export interface DecodeKeyTextOptions {
  /** `+` means a space (query strings, `application/x-www-form-urlencoded`). @defaultValue false */
  readonly plusAsSpace?: boolean;
  /** ASCII characters that stay percent-encoded once decoded, e.g. `'/'` in a path segment. @defaultValue `''` */
  readonly keep?: string;
}

/**
 * Percent-decodes one URL component (a query argument, a cookie value, a path segment) into key
 * text, one-to-one with the bytes it encodes, so that two values share a bucket only when they
 * mean the same bytes (`%61` and `a` do; `%FF` and `%FE` do not):
 *
 * - escapes forming UTF-8 are decoded (`%C3%A9` → `é`, `%0D%0A` → CR LF);
 * - a byte that is not part of valid UTF-8 stays `%XX` (upper-case), where `decodeURIComponent`
 *   throws and `URLSearchParams` writes U+FFFD for every such byte, merging distinct values;
 * - a decoded `%` is written `%25`, so a value that really was `%FF` (sent `%25FF`) never meets
 *   the invalid byte `%FF`; a `%` that starts no escape is the character `%` itself (also `%25`);
 * - characters in `keep` stay encoded (a `%2F` inside a path segment is data, not a separator).
 *
 * Text without `%` (or `+` with `plusAsSpace`) is returned as is: the common case costs one scan.
 *
 * @param text - the component as received
 * @param options - `plusAsSpace`, `keep`
 * @example
 * ```ts
 * decodeKeyText('a%20b');                         // 'a b'
 * decodeKeyText('%FF');                           // '%FF'
 * decodeKeyText('100%25');                        // '100%25'
 * decodeKeyText('a%2Fb', { keep: '/' });          // 'a%2Fb'
 * decodeKeyText('a+b', { plusAsSpace: true });    // 'a b'
 * ```
 */
export function decodeKeyText(text: string, options: DecodeKeyTextOptions = {}): string {
  const source = options.plusAsSpace === true ? text.replaceAll('+', ' ') : text;
  const first = source.indexOf('%');
  if (first < 0) return source;
  const keep = options.keep ?? '';
  let out = source.slice(0, first);
  let i = first;
  while (i < source.length) {
    const next = source.indexOf('%', i);
    if (next < 0) {
      out += source.slice(i);
      break;
    }
    out += source.slice(i, next);
    // A run of escapes is decoded as one byte sequence: UTF-8 characters span several escapes.
    const bytes: number[] = [];
    i = next;
    while (source[i] === '%') {
      const hex = source.slice(i + 1, i + 3);
      if (HEX_PAIR.test(hex)) {
        bytes.push(Number.parseInt(hex, 16));
        i += 3;
      } else {
        bytes.push(0x25);
        i += 1;
      }
    }
    out += canonicalBytes(bytes, keep);
  }
  return out;
}

function canonicalBytes(bytes: readonly number[], keep: string): string {
  let out = '';
  let i = 0;
  while (i < bytes.length) {
    const byte = bytes[i] as number;
    if (byte < 0x80) {
      const char = String.fromCharCode(byte);
      out += char === '%' || keep.includes(char) ? escapeByte(byte) : char;
      i += 1;
      continue;
    }
    // Lead bytes of 2-, 3- and 4-byte sequences (RFC 3629); the fatal decoder rejects overlong
    // forms, surrogates and code points past U+10FFFF.
    const length =
      byte >= 0xc2 && byte <= 0xdf
        ? 2
        : byte >= 0xe0 && byte <= 0xef
          ? 3
          : byte >= 0xf0 && byte <= 0xf4
            ? 4
            : 0;
    const char = length > 0 && i + length <= bytes.length ? utf8(bytes.slice(i, i + length)) : undefined;
    if (char === undefined) {
      out += escapeByte(byte);
      i += 1;
    } else {
      out += char;
      i += length;
    }
  }
  return out;
}

function utf8(bytes: readonly number[]): string | undefined {
  try {
    return UTF8.decode(Uint8Array.from(bytes));
  } catch {
    return undefined;
  }
}

function escapeByte(byte: number): string {
  return `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
}

/**
 * Writes `char` and `%` as `%XX` (their UTF-8 bytes) in `value`: a one-to-one escape after which
 * `value` no longer contains `char`. Composed keys use it so a value cannot contain the text that
 * separates it from its neighbour.
 *
 * @param char - one character (code point)
 * @example
 * ```ts
 * escaperFor(':')('a:b%'); // 'a%3Ab%25'
 * ```
 */
export function escaperFor(char: string): (value: string) => string {
  const special = new RegExp(`[%${char.replace(/[\\\]^-]/g, '\\$&')}]`, 'gu');
  const escape = (found: string): string => {
    let out = '';
    for (const byte of Buffer.from(found, 'utf8')) out += escapeByte(byte);
    return out;
  };
  return (value) => value.replace(special, escape);
}
