import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { escapeKeyText, MAX_VERBATIM_KEY_LENGTH, redisKey } from '../../src/stores/redis/redis-keys';

/** The inverse of escapeKeyText for verbatim results: its existence proves escaping is one-to-one. */
function unescape(segment: string): string {
  if (segment === '%') return '';
  return segment.replace(/%(u[0-9A-F]{4}|[0-9A-F]{2})/g, (_, hex: string) =>
    String.fromCharCode(parseInt(hex.startsWith('u') ? hex.slice(1) : hex, 16)),
  );
}

/** Any JS string: full Unicode, lone surrogates, and plenty of the characters that matter. */
const anyText = fc.oneof(
  fc.string({ unit: 'binary' }),
  fc.string({
    unit: fc.constantFrom(
      '{',
      '}',
      '%',
      ':',
      '7',
      'B',
      'u',
      'D',
      '8',
      '0',
      '\r',
      '\n',
      '\uD800',
      '\uDC00',
      'x',
    ),
  }),
);

describe('escapeKeyText', () => {
  test('is one-to-one, never empty and never holds a brace', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        const escaped = escapeKeyText(text);
        expect(escaped.length).toBeGreaterThan(0);
        expect(escaped).not.toMatch(/[{}]/);
        if (!escaped.startsWith('%h')) expect(unescape(escaped)).toBe(text);
      }),
      { numRuns: 2000 },
    );
  });

  test('distinct texts give distinct segments', () => {
    fc.assert(
      fc.property(anyText, anyText, (a, b) => {
        fc.pre(a !== b);
        expect(escapeKeyText(a)).not.toBe(escapeKeyText(b));
      }),
      { numRuns: 2000 },
    );
  });

  test.each([
    ['', '%'],
    ['user:42', 'user:42'],
    ['{a}', '%7Ba%7D'],
    ['%7B', '%257B'],
    ['100%', '100%25'],
    ['\uD800', '%uD800'],
    ['\uDC00x', '%uDC00x'],
    ['\uD83D\uDD25', '\uD83D\uDD25'],
    ['\r\n\u0000', '\r\n\u0000'],
  ])('%j → %j', (text, escaped) => {
    expect(escapeKeyText(text)).toBe(escaped);
  });

  test(`text escaping to more than ${MAX_VERBATIM_KEY_LENGTH} characters becomes its SHA-256`, () => {
    const verbatim = 'x'.repeat(MAX_VERBATIM_KEY_LENGTH);
    expect(escapeKeyText(verbatim)).toBe(verbatim);
    const long = 'x'.repeat(10_000);
    expect(escapeKeyText(long)).toBe(`%h${createHash('sha256').update(long).digest('hex')}`);
    // 100 braces escape to 300 characters: hashed, after escaping.
    expect(escapeKeyText('{'.repeat(100))).toMatch(/^%h[0-9a-f]{64}$/);
  });
});

describe('redisKey', () => {
  test('layout: [store prefix:]prefix:{key}:algorithm[@format]', () => {
    // Format 2 of the buckets' state (its expiry stored with it) is marked after the algorithm.
    expect(redisKey(undefined, 'sluice', 'user:42', 'gcra')).toBe('sluice:{user:42}:gcra@2');
    expect(redisKey(undefined, 'sluice', 'k', 'token-bucket', '10r/s', 1)).toBe(
      'sluice:{k}:token-bucket@2:10r/s:1',
    );
    expect(redisKey('app', 'sluice', '', 'sliding-log')).toBe('app:sluice:{%}:sliding-log');
    expect(redisKey('a{b}', 'c}', '{k}', 'fixed-window')).toBe('a%7Bb%7D:c%7D:{%7Bk%7D}:fixed-window');
  });

  test('the escaped key is the only hash tag: the first { … } of the key, whatever the texts', () => {
    fc.assert(
      fc.property(
        fc.option(
          anyText.filter((t) => t !== ''),
          { nil: undefined },
        ),
        anyText,
        anyText,
        (storePrefix, prefix, key) => {
          const full = redisKey(storePrefix, prefix, key, 'gcra');
          const open = full.indexOf('{');
          const close = full.indexOf('}', open);
          expect(full.slice(open + 1, close)).toBe(escapeKeyText(key));
          expect(full.split('{')).toHaveLength(2);
          expect(full.split('}')).toHaveLength(2);
        },
      ),
      { numRuns: 1000 },
    );
  });
});
