import fc from 'fast-check';
import { ALGORITHMS, SluiceConfigError, consumeAll, createLimiter, MemoryStore } from '../../src';
import { errorOf } from '../contract/config-error-of';

describe('createLimiter options', () => {
  test('defaults: gcra, nginx rates burst 0, count rates burst limit - 1', () => {
    expect(createLimiter({ rate: '10r/s' }).policy).toEqual({
      algorithm: 'gcra',
      limit: 10,
      windowMs: 1000,
      burst: 0,
      nodelay: false,
      delay: 0,
      maxWaitMs: 0,
      warmupMs: 0,
      source: '10r/s',
    });
    expect(createLimiter({ rate: '100/1m' }).policy.burst).toBe(99);
    expect(createLimiter({ rate: '100/1m', burst: 5 }).policy.burst).toBe(5);
  });

  test.each([
    [{ rate: '6r/x' }, 'rate', /unit must be r\/s or r\/m/],
    [{}, 'rate', /is required/],
    [{ rate: '1r/s', burst: -1 }, 'burst', /whole number from 0/],
    [{ rate: '1r/s', burst: 1.5 }, 'burst', /whole number/],
    [{ rate: '1r/s', burst: NaN }, 'burst', /whole number/],
    [{ rate: '1r/s', burst: '5' }, 'burst', /whole number/],
    [{ rate: '1r/s', algorithm: 'leaky' }, 'algorithm', /expected one of 'gcra', 'token-bucket'/],
    [{ rate: '1r/s', nodelay: true }, 'nodelay', /only applies to algorithm 'leaky-bucket'/],
    [{ rate: '1r/s', algorithm: 'leaky-bucket', nodelay: 'yes' }, 'nodelay', /true or false/],
    [{ rate: '1r/s', algorithm: 'leaky-bucket', delay: -2 }, 'delay', /whole number/],
    [{ rate: '1r/s', algorithm: 'leaky-bucket', nodelay: true, delay: 2 }, 'delay', /cannot be combined/],
    [{ rate: '1r/s', rat: 1 }, 'rat', /unknown option; accepted: rate, burst/],
    [{ rate: '1r/s', prefix: '' }, 'prefix', /non-empty string/],
    [{ rate: '1r/s', clock: 5 }, 'clock', /function/],
    [{ rate: '1r/s', cost: -1 }, 'cost', /whole number/],
    [{ rate: '1r/s', store: {} }, 'store', /expected a store/],
    [{ rate: '200000/1m', algorithm: 'sliding-log' }, 'rate', /at most 100000/],
    [{ rate: '1/365d', burst: 1_000_000 }, 'burst', /too large/],
    // Not an options object: an array is refused as such, not later on its missing rate.
    [[{ rate: '1r/s' }], 'options', /expected an object/],
    [null, 'options', /expected an object/],
    // Insurance divides the rate by `instances`: bounded, and the divided policy must still fit.
    [
      { rate: '10r/s', onStoreError: { insurance: new MemoryStore(), instances: 1e308 } },
      'onStoreError.instances',
      /from 1 to 10000/,
    ],
    [
      {
        rate: '1/365d',
        algorithm: 'leaky-bucket',
        onStoreError: { insurance: new MemoryStore(), instances: 1000 },
      },
      'onStoreError.instances',
      /too large for the rate divided/,
    ],
    // More than 16 rates for one key, as `rate: [...]` is refused.
    [
      { rate: '10r/s', overrides: { hot: Array.from({ length: 17 }, (_, i) => `${i + 1}r/s`) } },
      'overrides["hot"]',
      /1 to 16/,
    ],
    [{ rate: '10r/s', overrides: new Map([[1001, '50r/s']]) }, 'overrides', /keys are strings/],
    // An object that is not a plain one is no options object.
    [{ rate: '10r/s', blockCache: [] }, 'blockCache', /expected true, false or \{ maxKeys/],
    [{ rate: '10r/s', blockCache: new Date(0) }, 'blockCache', /expected true, false or \{ maxKeys/],
    // A burst the user never gave is not blamed: the rate is.
    [{ rate: '1000000000/365d' }, 'rate', /too large/],
  ])('%j → SluiceConfigError on %s', (options, option, message) => {
    const error = errorOf(() => createLimiter(options as never));
    expect(error.option).toBe(option);
    expect(error.message).toMatch(message);
    expect(error.message.startsWith(`${option} `)).toBe(true);
  });

  test('a value whose inspection throws (a Proxy) is still named', () => {
    const trap = new Proxy(
      {},
      {
        get: () => {
          throw new Error('trap');
        },
      },
    );
    expect(errorOf(() => createLimiter({ rate: '10r/s', burst: trap as never })).option).toBe('burst');
  });

  test('MemoryStore options are checked too', () => {
    expect(errorOf(() => new MemoryStore({ maxKeys: 0 })).option).toBe('maxKeys');
    for (const options of [null, [], 5, 'x'])
      expect(errorOf(() => new MemoryStore(options as never)).option).toBe('options');
    expect(errorOf(() => new MemoryStore({ maxkeys: 5 } as never)).code).toBe('SLUICE_UNKNOWN_OPTION');
  });

  test('bad per-call arguments throw SluiceConfigError naming them', () => {
    const limiter = createLimiter({ rate: '1r/s' });
    for (const cost of [-1, 1.5, NaN, Infinity, '1']) {
      expect(errorOf(() => limiter.consume('k', { cost: cost as number })).option).toBe('cost');
    }
    expect(errorOf(() => limiter.consume(42 as unknown as string)).option).toBe('key');
    // Options that are not an object, or a misspelt one, are named, not ignored.
    expect(errorOf(() => limiter.consume('k', 5 as never)).option).toBe('options');
    const typo = errorOf(() => limiter.consume('k', { cost: 1, costs: 5 } as never));
    expect([typo.option, typo.code]).toEqual(['costs', 'SLUICE_UNKNOWN_OPTION']);
    expect(errorOf(() => limiter.peek('k', { cost: 1 } as never)).option).toBe('cost');
  });

  test('consumeAll names what is wrong with its list', async () => {
    const limiter = createLimiter({ rate: '1r/s' });
    for (const requests of [null, 'x', [{ limiter: {}, key: 'a' }], [null]]) {
      await expect(consumeAll(requests as never)).rejects.toBeInstanceOf(SluiceConfigError);
    }
    expect((await consumeAll([{ limiter, key: 'a' }]))[0]?.allowed).toBe(true);
  });

  test('a clock past 2^53 ms is refused as the Redis store refuses it, not decided in memory alone', () => {
    const limiter = createLimiter({ rate: '1r/s', clock: () => 2 ** 53 });
    expect(() => limiter.consume('k')).toThrow(/clock 9007199254740992: must return epoch milliseconds/);
  });

  test('a clock returning garbage is reported, not used', () => {
    const limiter = createLimiter({ rate: '1r/s', clock: () => NaN });
    expect(() => limiter.consume('k')).toThrow(/clock NaN: must return epoch milliseconds/);
  });

  test('property: generated invalid options always throw SluiceConfigError at construction', () => {
    const invalidBurst = fc.oneof(
      fc.integer({ max: -1 }),
      fc.double({ noInteger: true }),
      fc.constantFrom(NaN, Infinity, -Infinity),
      fc.string(),
    );
    const invalidAlgorithm = fc.string().filter((s) => !(ALGORITHMS as readonly string[]).includes(s));
    const unknownName = fc
      .string({ minLength: 1 })
      .filter(
        (s) =>
          !['rate', 'burst', 'algorithm', 'nodelay', 'delay', 'store', 'prefix', 'clock', 'cost'].includes(s),
      );
    fc.assert(
      fc.property(
        fc.oneof(
          invalidBurst.map((burst) => ({ rate: '1r/s', burst })),
          invalidAlgorithm.map((algorithm) => ({ rate: '1r/s', algorithm })),
          unknownName.map((name) => ({ rate: '1r/s', [name]: 1 })),
          fc
            .string()
            .filter((s) => !/^\d/.test(s))
            .map((rate) => ({ rate })),
        ),
        (options) => {
          expect(() => createLimiter(options as never)).toThrow(SluiceConfigError);
        },
      ),
    );
  });
});
