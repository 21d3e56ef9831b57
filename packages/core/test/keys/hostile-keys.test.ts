import fc from 'fast-check';
import { SluiceConfigError } from '../../src';
import {
  clientAddressKey,
  compileKeyTemplate,
  RequestView,
  type ClientAddressOptions,
  type HttpRequest,
} from '../../src/adapter';
import { decodeKeyText, escaperFor } from '../../src/keys/key-text';

const direct: ClientAddressOptions = { trust: undefined, ipv6Subnet: 64 };

function keyOf(template: string, request: Partial<HttpRequest> = {}): string {
  const view = new RequestView({ remoteAddress: '203.0.113.9', url: '/', headers: {}, ...request });
  return compileKeyTemplate(template, direct)(view);
}

/** Every byte written as an escape, as a client may. */
const escaped = (bytes: Iterable<number>): string =>
  [...bytes].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');

describe('decodeKeyText', () => {
  test.each([
    ['a%20b', 'a b'],
    ['%61', 'a'],
    ['%C3%A9', 'é'],
    ['%0D%0A', '\r\n'],
    ['%F0%9F%98%80', '😀'],
    ['%FF', '%FF'],
    ['%ff%FE', '%FF%FE'],
    ['%25FF', '%25FF'],
    ['100%', '100%25'],
    ['%zz', '%25zz'],
    ['%C3', '%C3'],
    ['%C3%28', '%C3('],
    ['%ED%A0%80', '%ED%A0%80'],
    ['%C0%AF', '%C0%AF'],
    ['%EF%BB%BFa', '\uFEFFa'],
    ['plain', 'plain'],
  ])('%j → %j', (text, key) => {
    expect(decodeKeyText(text)).toBe(key);
  });

  test('plus is a space only where asked; kept characters stay encoded', () => {
    expect(decodeKeyText('a+b', { plusAsSpace: true })).toBe('a b');
    expect(decodeKeyText('a%2Bb', { plusAsSpace: true })).toBe('a+b');
    expect(decodeKeyText('a+b')).toBe('a+b');
    expect(decodeKeyText('a%2fb', { keep: '/' })).toBe('a%2Fb');
  });

  test('property: text a client encoded decodes back (with % written %25)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), (text) => {
        expect(decodeKeyText(encodeURIComponent(text))).toBe(text.replaceAll('%', '%25'));
      }),
    );
  });

  test('property: distinct bytes never decode to the same key, however they are written', () => {
    // Bytes chosen to meet every rule: '%', hex digits, UTF-8 leads and continuations, invalid bytes.
    const byte = fc.constantFrom(0x25, 0x46, 0x61, 0x80, 0xa9, 0xbb, 0xbf, 0xbd, 0xc3, 0xed, 0xef, 0xff);
    const bytes = fc.array(byte, { maxLength: 6 });
    fc.assert(
      fc.property(bytes, bytes, (a, b) => {
        if (Buffer.from(a).equals(Buffer.from(b))) return;
        expect(decodeKeyText(escaped(a))).not.toBe(decodeKeyText(escaped(b)));
      }),
      { numRuns: 2000 },
    );
  });
});

/**
 * The decoder before issue #16 (item 3), kept as the reference: a fatal TextDecoder tried on each
 * candidate sequence, an exception caught per invalid byte. Same keys, at a cost that grew with
 * every invalid escape; the hand-written validator must agree with it on every input.
 */
function referenceDecode(text: string): string {
  const fatal = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  const hex = (b: number) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  return text.replace(/(?:%[0-9A-Fa-f]{2}|%)+/g, (run) => {
    const bytes: number[] = [];
    for (let i = 0; i < run.length;) {
      const pair = run.slice(i + 1, i + 3);
      if (/^[0-9A-Fa-f]{2}$/.test(pair)) {
        bytes.push(Number.parseInt(pair, 16));
        i += 3;
      } else {
        bytes.push(0x25);
        i += 1;
      }
    }
    let out = '';
    for (let i = 0; i < bytes.length;) {
      const byte = bytes[i] as number;
      if (byte < 0x80) {
        out += byte === 0x25 ? '%25' : String.fromCharCode(byte);
        i += 1;
        continue;
      }
      const length =
        byte >= 0xc2 && byte <= 0xdf
          ? 2
          : byte >= 0xe0 && byte <= 0xef
            ? 3
            : byte >= 0xf0 && byte <= 0xf4
              ? 4
              : 0;
      let char: string | undefined;
      try {
        char =
          length > 0 && i + length <= bytes.length
            ? fatal.decode(Uint8Array.from(bytes.slice(i, i + length)))
            : undefined;
      } catch {
        char = undefined;
      }
      out += char ?? hex(byte);
      i += char === undefined ? 1 : length;
    }
    return out;
  });
}

describe('decodeKeyText agrees with the decoder it replaced (issue #16, item 3)', () => {
  test('property: every byte sequence, escaped, decodes to the same key', () => {
    // Every lead byte class, every continuation range edge, ASCII, '%' and stray '%'.
    const edges = [0x00, 0x25, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf];
    const leads = [0xe0, 0xe1, 0xec, 0xed, 0xee, 0xef, 0xf0, 0xf1, 0xf3, 0xf4, 0xf5, 0xff];
    const byte = fc.oneof(fc.constantFrom(...edges, ...leads), fc.integer({ min: 0, max: 255 }));
    const piece = fc.oneof(
      fc.array(byte, { maxLength: 8 }).map((bytes) => escaped(bytes)),
      fc.constantFrom('%', '%4', '%zz', 'a', '+', '%%41'),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 6 }), (pieces) => {
        const text = pieces.join('');
        expect(decodeKeyText(text)).toBe(referenceDecode(text));
      }),
      { numRuns: 5000 },
    );
  });

  test('every sequence of up to 3 UTF-8 edge bytes, and 4 after F0 and F4, decodes as the fatal TextDecoder reads it', () => {
    const bytes = [
      0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc1, 0xc2, 0xdf, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5,
    ];
    const sequences: number[][] = [[]];
    for (let length = 1; length <= 4; length++) {
      const prefixes = sequences.filter(
        (s) => s.length === length - 1 && (length < 4 || s[0] === 0xf0 || s[0] === 0xf4),
      );
      for (const prefix of prefixes) for (const b of bytes) sequences.push([...prefix, b]);
    }
    for (const sequence of sequences) {
      const text = escaped(sequence);
      expect([text, decodeKeyText(text)]).toEqual([text, referenceDecode(text)]);
    }
  });
});

describe('escaperFor', () => {
  test('escapes the separator and %, one to one', () => {
    expect(escaperFor(':')('a:b%3A')).toBe('a%3Ab%253A');
    expect(escaperFor('😀')('x😀y')).toBe('x%F0%9F%98%80y');
    expect(escaperFor(']')('a]b')).toBe('a%5Db');
    expect(escaperFor('-')('a-b')).toBe('a%2Db');
  });
});

describe('hostile key text', () => {
  test('prototype names as header, argument and cookie names: read only when sent, never crash', () => {
    for (const template of ['$http_constructor', '$http___proto__', '$http_hasownproperty']) {
      expect(keyOf(template)).toBe('');
    }
    expect(keyOf('$http_constructor', { headers: { constructor: 'c' } })).toBe('c');
    expect(keyOf('$http___proto__', { headers: { '--proto--': 'p' } })).toBe('p');
    expect(keyOf('$arg___proto__', { url: '/?__proto__=x' })).toBe('x');
    expect(keyOf('$arg_constructor', { url: '/?constructor=y&toString=z' })).toBe('y');
    expect(keyOf('$arg_constructor')).toBe('');
    expect(keyOf('$arg_toString', { url: '/?a=1' })).toBe('');
    expect(keyOf('$cookie___proto__', { headers: { cookie: '__proto__=x; constructor=y' } })).toBe('x');
    expect(keyOf('$cookie_constructor', { headers: { cookie: 'constructor=y' } })).toBe('y');
    expect(keyOf('$cookie_constructor', { headers: { cookie: 'a=1' } })).toBe('');
  });

  test('a header value that is not text (a framework quirk) is no value, not a crash', () => {
    const odd = { 'user-id': 42 } as unknown as HttpRequest['headers'];
    expect(keyOf('$http_user_id', { headers: odd })).toBe('');
    expect(keyOf('$http_user_id', { headers: { 'user-id': ['a', 'b'] } })).toBe('a, b');
  });

  test('distinct values that URLSearchParams or decodeURIComponent would merge keep their own keys', () => {
    const args = ['%FF', '%FE', '%EF%BF%BD', '%25FF', '%2B', '+', '%ED%A0%80'];
    const keys = args.map((arg) => keyOf('$arg_x', { url: `/?x=${arg}` }));
    expect(new Set(keys).size).toBe(args.length);
    expect(keyOf('$arg_x', { url: '/?x=a+b' })).toBe(keyOf('$arg_x', { url: '/?x=a%20b' }));
    const cookies = ['%FF', '%25FF'].map((v) => keyOf('$cookie_s', { headers: { cookie: `s=${v}` } }));
    expect(cookies).toEqual(['%FF', '%25FF']);
    expect(keyOf('$uri', { url: '/a%2Fb' })).toBe('/a%2Fb');
    expect(keyOf('$uri', { url: '/a/b' })).toBe('/a/b');
    expect(keyOf('$uri', { url: '/100%25' })).toBe('/100%25');
  });

  test('CR/LF, unicode, {} and 1 MB are key text like any other', () => {
    expect(keyOf('$arg_x', { url: '/?x=a%0D%0Ab' })).toBe('a\r\nb');
    expect(keyOf('$arg_x', { url: '/?x=%7B%7D' })).toBe('{}');
    expect(keyOf('$arg_x', { url: '/?x=e%CC%81' })).not.toBe(keyOf('$arg_x', { url: '/?x=%C3%A9' }));
    const big = 'x'.repeat(1 << 20);
    expect(keyOf('$arg_x', { url: `/?x=${big}` })).toBe(big);
    expect(keyOf('$http_a:$arg_x', { url: `/?x=${big}`, headers: { a: big } })).toBe(`${big}:${big}`);
  });

  test('a composed key escapes a value where it meets a separator, so values cannot shift', () => {
    const of = (user: string, sku: string) =>
      keyOf('$http_user_id:$arg_sku_id', {
        url: `/?sku_id=${encodeURIComponent(sku)}`,
        headers: { 'user-id': user },
      });
    expect(of('u7', '42')).toBe('u7:42');
    expect(of('a:b', 'c')).toBe('a%3Ab:c');
    expect(of('a', 'b:c')).toBe('a:b:c');
    expect(of('a%3Ab', 'c')).toBe('a%253Ab:c');
    expect(of('', ':x')).toBe('::x');
    expect(new Set([of('a:b', 'c'), of('a', 'b:c'), of('a%3Ab', 'c'), of('', 'a:b:c')]).size).toBe(4);
    // The client address is the pivot: it is never escaped, so IPv6 keys stay readable.
    const v6 = { remoteAddress: '2001:db8:1:2::1', url: '/?x=a:b' };
    expect(keyOf('$binary_remote_addr:$arg_x', v6)).toBe('2001:db8:1:2::/64:a%3Ab');
    expect(keyOf('$arg_x:$binary_remote_addr', v6)).toBe('a%3Ab:2001:db8:1:2::/64');
  });

  test.each(['$http_a$arg_b', '${http_a}${arg_b}', 'k:$http_a${arg_b}:v', '$uri$uri'])(
    'two variables side by side are refused: %s',
    (template) => {
      expect(() => compileKeyTemplate(template, direct)).toThrow(
        expect.objectContaining({ option: 'key', message: expect.stringMatching(/put text between/) }),
      );
      expect(() => compileKeyTemplate(template, direct)).toThrow(SluiceConfigError);
    },
  );

  // A '%' where a value meets its separator: `u7%` then `x` and `u7` then `25%x` were one key
  // (found by an audit), as were two values right of the address.
  test.each([
    '$http_a%$http_b',
    'k$http_a%:$http_b',
    '$remote_addr:$http_a%$http_b',
    '$http_a:$remote_addr:%$http_b',
  ])('a "%%" where a value meets its separator is refused: %s', (template) => {
    expect(() => compileKeyTemplate(template, direct)).toThrow(
      expect.objectContaining({
        option: 'key',
        message: expect.stringMatching(/another separator than "%"/),
      }),
    );
  });

  test.each([
    '$http_a:$http_b',
    '$http_a:$remote_addr',
    '$remote_addr:$http_a',
    'k$http_a::$http_b|$http_c.v',
    '$http_a:%$http_b',
    '$http_a:%$remote_addr%:$http_b',
    '${http_a}5$http_b',
    '${http_a}A${remote_addr}:${http_b}F',
    '$http_a😀$http_b:$binary_remote_addr/$http_c',
  ])('%s is one-to-one with its values and the client address (every combination)', (template) => {
    // Values built from the separators, '%', hex digits and what escapes produce: plain
    // concatenation merges many.
    const values = [
      '',
      ':',
      'A',
      ':A',
      'A:',
      '::',
      '%',
      '%3A',
      '😀',
      '|.',
      '/k',
      '.v',
      'k:',
      '%25',
      '25%',
      '5',
      '%35',
      'F%',
    ];
    const addresses = [
      '203.0.113.9',
      '1.2.3.4',
      '::ffff:1.2.3.4',
      '2001:db8:1:2::1',
      '1:2::1',
      '2600:1f18::1',
      '2a00:2600:1f18::1',
    ];
    const read = compileKeyTemplate(template, direct);
    const reads = (name: string) => template.includes(`$http_${name}`);
    const seen = new Map<string, string>();
    for (const a of reads('a') ? values : ['']) {
      for (const b of reads('b') ? values : ['']) {
        for (const c of reads('c') ? values : ['']) {
          for (const address of template.includes('remote_addr') ? addresses : ['203.0.113.9']) {
            const key = read(new RequestView({ remoteAddress: address, url: '/', headers: { a, b, c } }));
            const identity = JSON.stringify([a, b, c, clientAddressKey(address, 64)]);
            expect([key, seen.get(key) ?? identity]).toEqual([key, identity]);
            seen.set(key, identity);
          }
        }
      }
    }
  });
});
