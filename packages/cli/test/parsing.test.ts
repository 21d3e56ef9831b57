import fc from 'fast-check';
import { parseCombinedLine } from '../src/input/combined-format';
import { splitCsvLine } from '../src/input/csv-fields';
import { parseLogTime } from '../src/input/log-time';
import { policyOptions } from '../src/replay/policy-spec';
import { TopKeys } from '../src/replay/top-keys';

describe('log times', () => {
  const noon = Date.UTC(2024, 4, 1, 12, 0, 0);
  test.each([
    ['01/May/2024:12:00:00 +0000', noon, true],
    ['[01/May/2024:14:00:00 +0200]', noon, true],
    ['01/May/2024:07:30:00 -0430', noon, true],
    ['2024-05-01T12:00:00Z', noon, true],
    ['2024-05-01T12:00:00.250Z', noon + 250, false],
    ['2024-05-01 14:00:00+02:00', noon, true],
    ['2024-05-01T14:00:00+0200', noon, true],
    ['2024-05-01 12:00:00', noon, true], // no offset: UTC, whatever the machine's zone
    ['1714564800', noon, true],
    ['1714564800.123', noon + 123, false],
    ['1714564800123', noon + 123, false],
    [1714564800, noon, true],
    [1714564800.5, noon + 500, false],
  ])('%s', (text, ms, wholeSeconds) => {
    expect(parseLogTime(text)).toEqual({ ms, wholeSeconds });
  });

  test.each(['yesterday', '', '01/Foo/2024:12:00:00 +0000', '2024-05-01', '-1', null, {}])(
    '%p is no time',
    (text) => {
      expect(parseLogTime(text)).toBeUndefined();
    },
  );
});

describe('combined log lines', () => {
  test('nginx escapes and the "main" format\'s X-Forwarded-For', () => {
    const line =
      '203.0.113.9 - alice [01/May/2024:12:00:00 +0000] "GET /q?s=\\x22a\\x22 HTTP/1.1" 200 5 "-" "agent \\"x\\"" "198.51.100.7, 10.0.0.1"';
    expect(parseCombinedLine(line)).toEqual({
      time: '01/May/2024:12:00:00 +0000',
      request: {
        remoteAddress: '203.0.113.9',
        url: '/q?s="a"',
        headers: { 'user-agent': 'agent "x"', 'x-forwarded-for': '198.51.100.7, 10.0.0.1' },
      },
    });
  });

  test('the common format, and a request line that is not a request', () => {
    expect(
      parseCombinedLine('192.0.2.1 - - [01/May/2024:12:00:00 +0000] "GET / HTTP/1.0" 200 -')?.request.url,
    ).toBe('/');
    expect(
      parseCombinedLine('192.0.2.1 - - [01/May/2024:12:00:00 +0000] "-" 400 0 "-" "-"')?.request,
    ).toEqual({
      remoteAddress: '192.0.2.1',
      url: '',
      headers: {},
    });
  });
});

describe('CSV fields', () => {
  test('quotes, commas and doubled quotes', () => {
    expect(splitCsvLine('a,"b,c","say ""hi""",')).toEqual(['a', 'b,c', 'say "hi"', '']);
    expect(splitCsvLine('"open')).toBeUndefined();
    expect(splitCsvLine('"a"b,c')).toBeUndefined();
  });

  test('any fields written as CSV come back as they were', () => {
    const field = fc.string({ unit: fc.constantFrom('a', ',', '"', ' ', 'é', '1') });
    fc.assert(
      fc.property(fc.array(field, { minLength: 1, maxLength: 6 }), (fields) => {
        const line = fields.map((f) => (/[",]/.test(f) ? `"${f.replaceAll('"', '""')}"` : f)).join(',');
        expect(splitCsvLine(line)).toEqual(fields);
      }),
    );
  });
});

describe('policies as written on the command line', () => {
  test.each([
    ['gcra 10r/s burst=20', { algorithm: 'gcra', rate: '10r/s', burst: 20 }],
    ['10r/s', { rate: '10r/s' }],
    [
      'leaky-bucket rate=10r/s burst=20 nodelay',
      { algorithm: 'leaky-bucket', rate: '10r/s', burst: 20, nodelay: true },
    ],
    ['leaky-bucket 6r/m burst=5 delay=3', { algorithm: 'leaky-bucket', rate: '6r/m', burst: 5, delay: 3 }],
    ['token-bucket 5r/s 1000/1h', { algorithm: 'token-bucket', rate: ['5r/s', '1000/1h'] }],
    [
      'gcra 10r/s queue=500ms warmup=30s',
      { algorithm: 'gcra', rate: '10r/s', queue: { maxWaitMs: '500ms' }, warmup: '30s' },
    ],
    ['gcra 10r/s burst=lots', { algorithm: 'gcra', rate: '10r/s', burst: 'lots' }],
  ])('%s', (spec, options) => {
    expect(policyOptions(spec)).toEqual(options);
  });

  test.each([
    ['gcra', 'no rate'],
    ['gcra fixed-window 1r/s', 'two algorithms'],
    ['gcra 1r/s fast', 'unknown word "fast"'],
  ])('%s is refused: %s', (spec, message) => {
    expect(() => policyOptions(spec)).toThrow(message);
  });
});

describe('the keys counted most (Space-Saving)', () => {
  test('every key above total / capacity is followed, its count never below the truth', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 40 }), { minLength: 1, maxLength: 400 }), (stream) => {
        const capacity = 8;
        const summary = new TopKeys(capacity, () => undefined);
        const truth = new Map<string, number>();
        for (const n of stream) {
          const key = `k${n % 7 === 0 ? 0 : n}`; // key k0 is frequent
          summary.add(key);
          truth.set(key, (truth.get(key) ?? 0) + 1);
        }
        const top = new Map(summary.top(capacity).map((entry) => [entry.key, entry]));
        for (const [key, count] of truth) {
          if (count > stream.length / capacity) expect(top.has(key)).toBe(true);
          const entry = top.get(key);
          if (entry !== undefined) {
            expect(entry.count).toBeGreaterThanOrEqual(count);
            expect(entry.count - entry.error).toBeLessThanOrEqual(count);
          }
        }
      }),
    );
  });
});
