import { createLimiter, MemoryStore, SluiceConfigError, type Store, type StoreRequest } from '../../src';
import { describeOverridesContract } from '../contract/overrides-contract';
import { fakeClock } from '../contract/fake-clock';
import { FlakyStore } from '../resilience/flaky-store';

describeOverridesContract('MemoryStore', () => new MemoryStore());
describeOverridesContract('a remote store (guarded path)', () => new FlakyStore());

describe('per-key overrides: options', () => {
  test.each([
    [{ overrides: 'sku:1=10r/s' }, 'overrides', /expected an object or Map/],
    [{ overrides: ['10r/s'] }, 'overrides', /expected an object or Map/],
    [{ overrides: { 'sku:1': '6r/x' } }, 'overrides["sku:1"]', /unit must be r\/s or r\/m/],
    [{ overrides: new Map([['sku:1', 5]]) }, 'overrides["sku:1"]', /expected nginx syntax/],
    [{ overrides: { 'sku:1': [] } }, 'overrides["sku:1"]', /a list of 1 to 16 rates/],
  ])('%p → SluiceConfigError on %s at creation', (extra, option, message) => {
    expect(() => createLimiter({ rate: '1r/s', ...(extra as object) })).toThrow(
      expect.objectContaining({ option, message: expect.stringMatching(message) }),
    );
    expect(() => createLimiter({ rate: '1r/s', ...(extra as object) })).toThrow(SluiceConfigError);
  });

  test("an override shares the limiter options but the rate (with rules, the first rule's)", async () => {
    const limiter = createLimiter({
      algorithm: 'leaky-bucket',
      rate: '1r/s',
      burst: 2,
      nodelay: true,
      overrides: { k: '10r/s' },
      clock: fakeClock(),
    });
    expect((await limiter.consume('k')).policy).toMatchObject({
      algorithm: 'leaky-bucket',
      limit: 10,
      burst: 2,
      nodelay: true,
    });
    const ruled = createLimiter({
      rules: [{ rate: '1r/s', algorithm: 'token-bucket', burst: 1 }, { rate: '100/1h' }],
      overrides: { k: '5r/s' },
    });
    expect((await ruled.consume('k')).policy).toMatchObject({
      algorithm: 'token-bucket',
      limit: 5,
      burst: 1,
    });
  });

  test('an override with several rates needs a store with consumeRules: else the default decides and it is reported', async () => {
    const bare: Store = {
      consume: (request: StoreRequest) => new MemoryStore().consume(request),
      reset: () => Promise.resolve(),
    };
    expect(() => createLimiter({ rate: '1r/s', store: bare, overrides: { k: ['1r/s', '5/1m'] } })).toThrow(
      expect.objectContaining({ option: 'overrides["k"]', message: expect.stringMatching(/consumeRules/) }),
    );
  });

  test('a function making up endless invalid rates is reported for each, and never breaks a request', async () => {
    let n = 0;
    const limiter = createLimiter({ rate: '100/1s', overrides: () => `${++n}r/x`, clock: fakeClock() });
    let errors = 0;
    limiter.on('overrideError', () => errors++);
    for (let i = 0; i < 2000; i++) expect((await limiter.consume('k')).policy).toBe(limiter.policy);
    expect(errors).toBe(2000);
  });

  test('an async function: the own rate, reported as returning a promise; its rejection is handled (no crash)', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const limiter = createLimiter({
        rate: '1/1m',
        overrides: (async (key: string) => {
          if (key === 'bad') throw new Error('plan lookup failed');
          return '10/1m';
        }) as unknown as (key: string) => string,
        clock: fakeClock(),
      });
      const errors: string[] = [];
      limiter.on('overrideError', (event) => errors.push(`${event.key}: ${event.error.message}`));
      expect((await limiter.consume('bad')).policy).toBe(limiter.policy);
      expect((await limiter.consume('good')).policy).toBe(limiter.policy);
      expect((await limiter.consume('good')).allowed).toBe(false); // the own rate: 1 a minute
      expect(errors).toHaveLength(3);
      expect(errors[0]).toMatch(/^bad: overrides\["bad"\] .*the function returned a promise/);
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  test('a throwing function is a programming error: it throws at the call', () => {
    const limiter = createLimiter({
      rate: '1r/s',
      overrides: () => {
        throw new Error('boom');
      },
    });
    expect(() => limiter.consume('k')).toThrow('boom');
  });
});
