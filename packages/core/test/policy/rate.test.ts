import fc from 'fast-check';
import { SluiceConfigError, parseDuration, parseRate } from '../../src';
import { errorOf } from '../contract/config-error-of';

const expectConfigError = (fn: () => unknown, message?: RegExp): void => {
  const error = errorOf(fn);
  if (message) expect(error.message).toMatch(message);
};

describe('parseRate', () => {
  test.each([
    ['10r/s', 10, 1_000, 0],
    ['6r/m', 6, 60_000, 0],
    ['30r/m', 30, 60_000, 0],
    ['0.5r/s', 1, 2_000, 0],
    ['2.5r/s', 5, 2_000, 0],
    ['0.333r/s', 333, 1_000_000, 0],
    ['100/1m', 100, 60_000, 99],
    ['5/500ms', 5, 500, 4],
    ['1000/1h', 1000, 3_600_000, 999],
    ['7/1d', 7, 86_400_000, 6],
    ['3/1500', 3, 1_500, 2],
  ])('%s is %i per %i ms, default burst %i', (text, limit, windowMs, defaultBurst) => {
    expect(parseRate('rate', text)).toEqual({ limit, windowMs, defaultBurst, source: text });
  });

  test('{ limit, window } with ms or a duration', () => {
    expect(parseRate('rate', { limit: 100, window: '1m' })).toMatchObject({
      limit: 100,
      windowMs: 60_000,
      defaultBurst: 99,
    });
    expect(parseRate('rate', { limit: 3, window: 250 })).toMatchObject({
      limit: 3,
      windowMs: 250,
      source: '3/250ms',
    });
  });

  test.each([
    ['6r/x', /^rate "6r\/x": unit must be r\/s or r\/m$/],
    ['0r/s', /rate must be greater than 0/],
    ['0/1m', /at least 1/],
    ['-1r/s', /expected nginx syntax/],
    ['NaN', /expected nginx syntax/],
    ['Infinityr/s', /expected nginx syntax/],
    ['10 r/s', /expected nginx syntax/],
    ['100/1y', /window after "\/"/],
    ['', /expected nginx syntax/],
  ])('%j is rejected', (text, message) => {
    expectConfigError(() => parseRate('rate', text), message);
  });

  test.each([
    10,
    NaN,
    Infinity,
    null,
    undefined,
    [],
    () => 1,
    { limit: 0, window: '1s' },
    { limit: 1.5, window: '1s' },
    { limit: 5, window: '1x' },
    { limit: 5, window: '1s', extra: 1 },
    { limit: 5 },
  ])('non-rate value %p is rejected', (value) => {
    expectConfigError(() => parseRate('rate', value));
  });

  test('the error names the option, the value and what is accepted', () => {
    const error = errorOf(() => parseRate('rate', { limit: -3, window: '1s' }));
    expect(error).toMatchObject({
      name: 'SluiceConfigError',
      option: 'rate.limit',
      value: -3,
      code: 'SLUICE_INVALID_OPTION',
    });
    expect(error.message).toBe('rate.limit -3: must be a whole number from 1 to 1000000000');
  });

  test('property: every nginx rate round-trips to the same requests per ms', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10_000_000 }),
        fc.integer({ min: 0, max: 3 }),
        fc.constantFrom('s', 'm'),
        (scaled, decimals, unit) => {
          const value = scaled / 10 ** decimals;
          const text = `${value.toFixed(decimals)}r/${unit}`;
          const rate = parseRate('rate', text);
          const unitMs = unit === 's' ? 1_000 : 60_000;
          expect(Number.isInteger(rate.limit) && Number.isInteger(rate.windowMs)).toBe(true);
          expect(rate.limit * unitMs * 10 ** decimals).toBe(scaled * rate.windowMs);
          expect(rate.defaultBurst).toBe(0);
        },
      ),
    );
  });

  test('property: every count per window round-trips', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1_000_000_000 }),
        fc.integer({ min: 1, max: 365 }),
        fc.constantFrom(['ms', 1], ['s', 1_000], ['m', 60_000], ['h', 3_600_000], ['d', 86_400_000]),
        (limit, amount, [unit, ms]) => {
          fc.pre(amount * (ms as number) <= 365 * 86_400_000);
          const rate = parseRate('rate', `${limit}/${amount}${unit as string}`);
          expect(rate).toMatchObject({ limit, windowMs: amount * (ms as number), defaultBurst: limit - 1 });
          expect(parseRate('rate', { limit, window: rate.windowMs })).toMatchObject({
            limit,
            windowMs: rate.windowMs,
          });
        },
      ),
    );
  });

  test('property: any other input throws SluiceConfigError and nothing else', () => {
    const valid = /^(\d{1,10}(\.\d{1,6})?r\/[sm]|\d{1,10}\/(\d+|\d{1,12}(\.\d{1,6})?(ms|s|m|h|d)))$/;
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.string({ unit: fc.constantFrom(...'0123456789./rsmhdx -e+') }),
          fc.anything(),
        ),
        (value) => {
          let result: unknown;
          try {
            result = parseRate('rate', value);
          } catch (e) {
            expect(e).toBeInstanceOf(SluiceConfigError);
            return;
          }
          // Whatever was accepted is a well-formed rate.
          expect(typeof value === 'string' ? valid.test(value) : typeof value === 'object').toBe(true);
          expect(result).toMatchObject({ limit: expect.any(Number), windowMs: expect.any(Number) });
        },
      ),
    );
  });
});

describe('parseDuration', () => {
  test.each([
    [1, 1],
    [250, 250],
    ['500ms', 500],
    ['1s', 1_000],
    ['1.5s', 1_500],
    ['1m', 60_000],
    ['1h', 3_600_000],
    ['1d', 86_400_000],
  ])('%p is %i ms', (input, ms) => {
    expect(parseDuration('window', input)).toBe(ms);
  });

  test.each([0, -1, 1.5, NaN, Infinity, '0s', '1.5ms', '1w', '1 s', 's', '', '366d', null, {}])(
    '%p is rejected',
    (input) => {
      expectConfigError(() => parseDuration('window', input), /^window /);
    },
  );

  test('property: integer ms and unit strings round-trip; garbage throws SluiceConfigError only', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 365 * 86_400_000 }), (ms) => {
        expect(parseDuration('d', ms)).toBe(ms);
        expect(parseDuration('d', `${ms}ms`)).toBe(ms);
      }),
    );
    fc.assert(
      fc.property(fc.anything(), (value) => {
        try {
          const ms = parseDuration('d', value);
          expect(Number.isInteger(ms) && ms > 0).toBe(true);
        } catch (e) {
          expect(e).toBeInstanceOf(SluiceConfigError);
        }
      }),
    );
  });
});
