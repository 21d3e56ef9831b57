import { createLimiter, SluiceConfigError } from '../../src';
import { fakeClock } from '../contract/fake-clock';
import { FlakyStore } from '../resilience/flaky-store';

describe('limiter.consumeSync', () => {
  test('with the memory store: the same decisions as consume, without a promise, sharing one state', async () => {
    const clock = fakeClock();
    const limiter = createLimiter({ rate: '3/1s', clock });
    const sync = limiter.consumeSync('k');
    expect(sync).not.toBeInstanceOf(Promise);
    expect(sync).toMatchObject({ allowed: true, remaining: 2, key: 'k' });
    expect(await limiter.consume('k')).toMatchObject({ allowed: true, remaining: 1 });
    expect(limiter.consumeSync('k', { cost: 2 })).toMatchObject({
      allowed: false,
      remaining: 1,
      reason: 'limited',
    });
    expect(limiter.consumeSync('k')).toMatchObject({ allowed: true, remaining: 0 });
    clock.advance(1000);
    expect(limiter.consumeSync('other')).toMatchObject({ allowed: true, remaining: 2 });
  });

  test('rejected decisions are reported to listeners too', () => {
    const limiter = createLimiter({ rate: '1/1m' });
    const limited: string[] = [];
    limiter.on('limited', (d) => limited.push(d.key));
    limiter.consumeSync('k');
    limiter.consumeSync('k');
    expect(limited).toEqual(['k']);
  });

  test('with a remote store: undefined (use consume)', () => {
    const limiter = createLimiter({ rate: '1r/s', store: new FlakyStore() });
    expect(limiter.consumeSync('k')).toBeUndefined();
  });

  test('bad arguments throw like consume', () => {
    const limiter = createLimiter({ rate: '1r/s' });
    expect(() => limiter.consumeSync(1 as unknown as string)).toThrow(SluiceConfigError);
    expect(() => limiter.consumeSync('k', { cost: -1 })).toThrow(/cost -1/);
  });
});
