/** `%XX` of every byte, upper-case: escaping costs a table read. */
const ESCAPED: readonly string[] = Array.from(
  { length: 256 },
  (_, byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`,
);

/** Each ASCII character by its code: a decoded byte costs a table read, not a new string. */
const ASCII: readonly string[] = Array.from({ length: 0x80 }, (_, code) => String.fromCharCode(code));

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
 * One pass, linear in the length of `text`, and no exception on any input: the text is read
 * before a request is limited, so hostile input (thousands of invalid escapes) must cost no more
 * than reading it. Text without `%` (or `+` with `plusAsSpace`) is returned as is.
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
  const source = options.plusAsSpace === true && text.includes('+') ? text.replaceAll('+', ' ') : text;
  const first = source.indexOf('%');
  if (first < 0) return source;
  const keep = options.keep ?? '';
  const bytes: number[] = [];
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
    bytes.length = 0;
    i = next;
    while (i < source.length && source.charCodeAt(i) === 0x25) {
      const high = hexValue(source.charCodeAt(i + 1));
      const low = high < 0 ? -1 : hexValue(source.charCodeAt(i + 2));
      if (low < 0) {
        bytes.push(0x25); // a '%' that starts no escape is the character itself
        i += 1;
      } else {
        bytes.push((high << 4) | low);
        i += 3;
      }
    }
    out += canonicalBytes(bytes, keep);
  }
  return out;
}

/** The value of one hex digit's character code, -1 for any other (NaN past the end included). */
function hexValue(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  const lower = code | 0x20;
  if (lower >= 0x61 && lower <= 0x66) return lower - 0x61 + 10;
  return -1;
}

/** Key text of a byte sequence: whole UTF-8 characters decoded, every other byte `%XX`. */
function canonicalBytes(bytes: readonly number[], keep: string): string {
  let out = '';
  let i = 0;
  while (i < bytes.length) {
    const byte = bytes[i] as number;
    if (byte < 0x80) {
      const char = ASCII[byte] as string;
      out += byte === 0x25 || (keep !== '' && keep.includes(char)) ? (ESCAPED[byte] as string) : char;
      i += 1;
      continue;
    }
    const length = utf8SequenceLength(bytes, i);
    if (length === 0) {
      out += ESCAPED[byte] as string;
      i += 1;
      continue;
    }
    let codePoint = byte & (0xff >> (length + 1));
    for (let k = 1; k < length; k++) codePoint = (codePoint << 6) | ((bytes[i + k] as number) & 0x3f);
    out += String.fromCodePoint(codePoint);
    i += length;
  }
  return out;
}

/**
 * The length of the well-formed UTF-8 sequence starting at `bytes[i]` (a byte >= 0x80), or 0 when
 * none starts there. The ranges are RFC 3629's (Unicode table 3-7): no overlong forms, no
 * surrogates (U+D800–U+DFFF), nothing past U+10FFFF.
 */
export function utf8SequenceLength(bytes: readonly number[], i: number): number {
  const lead = bytes[i] as number;
  let length: number;
  // The range the second byte must fall in; later bytes are any continuation (0x80–0xBF).
  let low = 0x80;
  let high = 0xbf;
  if (lead >= 0xc2 && lead <= 0xdf) length = 2;
  else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    if (lead === 0xe0) low = 0xa0;
    else if (lead === 0xed) high = 0x9f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    if (lead === 0xf0) low = 0x90;
    else if (lead === 0xf4) high = 0x8f;
  } else return 0;
  if (i + length > bytes.length) return 0;
  const second = bytes[i + 1] as number;
  if (second < low || second > high) return 0;
  for (let k = 2; k < length; k++) {
    const next = bytes[i + k] as number;
    if (next < 0x80 || next > 0xbf) return 0;
  }
  return length;
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
    for (const byte of Buffer.from(found, 'utf8')) out += ESCAPED[byte] as string;
    return out;
  };
  return (value) => value.replace(special, escape);
}
