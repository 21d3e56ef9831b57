import { createLimiter, MemoryStore, SluiceConfigError, type Decision, type LimiterEvents } from '../../src';
import { fakeClock } from '../contract/fake-clock';
import { FlakyStore } from './flaky-store';

const collect = <E extends keyof LimiterEvents>(limiter: ReturnType<typeof createLimiter>, event: E) => {
  const seen: Array<LimiterEvents[E]> = [];
  limiter.on(event, (payload) => seen.push(payload));
  return seen;
};

describe('onStoreError', () => {
  test("'fail-open' admits, says so, and reports the error", async () => {
    const store = new FlakyStore();
    const limiter = createLimiter({ rate: '1r/m', store, onStoreError: 'fail-open' });
    const errors = collect(limiter, 'storeError');
    const fallbacks = collect(limiter, 'fallback');
    store.mode = 'throw';
    const d = await limiter.consume('k');
    expect(d).toMatchObject({ allowed: true, degraded: 'fail-open', limit: 1, retryAfterMs: 0 });
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ key: 'k', mode: 'fail-open' });
    expect(errors[0]?.error.message).toMatch(/ECONNREFUSED/);
    expect(fallbacks).toEqual([d]);
  });

  test("'fail-closed' rejects with reason store-unavailable and a retry time", async () => {
    const store = new FlakyStore();
    const limiter = createLimiter({ rate: '10r/s', store, onStoreError: 'fail-closed' });
    const limited = collect(limiter, 'limited');
    store.mode = 'throw';
    const d = await limiter.consume('k');
    expect(d).toMatchObject({
      allowed: false,
      reason: 'store-unavailable',
      degraded: 'fail-closed',
      remaining: 0,
    });
    expect(d.retryAfterMs).toBeGreaterThanOrEqual(1000);
    expect(limited).toEqual([d]);
  });

  test('default: an in-process insurance store keeps limiting while the store is down', async () => {
    const store = new FlakyStore();
    const limiter = createLimiter({ rate: '3/1m', store, clock: fakeClock() });
    store.mode = 'throw';
    const decisions: Decision[] = [];
    for (let i = 0; i < 4; i++) decisions.push(await limiter.consume('k'));
    expect(decisions.map((d) => [d.allowed, d.degraded])).toEqual([
      [true, 'insurance'],
      [true, 'insurance'],
      [true, 'insurance'],
      [false, 'insurance'],
    ]);
  });

  test('insurance divided by instances', async () => {
    const store = new FlakyStore();
    const gcra = createLimiter({
      rate: '8/1m',
      store,
      onStoreError: { insurance: new MemoryStore(), instances: 4 },
      clock: fakeClock(),
    });
    const windowed = createLimiter({
      algorithm: 'fixed-window',
      rate: '8/1m',
      store,
      onStoreError: { insurance: new MemoryStore(), instances: 4 },
      clock: fakeClock(),
    });
    store.mode = 'throw';
    for (const limiter of [gcra, windowed]) {
      const allowed: boolean[] = [];
      for (let i = 0; i < 4; i++) allowed.push((await limiter.consume('k')).allowed);
      expect(allowed).toEqual([true, true, false, false]);
    }
  });

  test('a hanging store costs at most timeoutMs (plus a little), then the fallback decides', async () => {
    const store = new FlakyStore();
    const limiter = createLimiter({ rate: '10r/s', store, timeoutMs: 30, onStoreError: 'fail-open' });
    const errors = collect(limiter, 'storeError');
    store.mode = 'hang';
    const started = performance.now();
    const d = await limiter.consume('k');
    const took = performance.now() - started;
    expect(d.degraded).toBe('fail-open');
    expect(took).toBeGreaterThanOrEqual(29);
    // timeoutMs and one turn of the loop; the margin is for a loaded 2-core machine (a store
    // left hanging would hold the request for jest's 30 s).
    expect(took).toBeLessThan(30 + 200);
    expect(errors[0]?.error.name).toBe('StoreTimeoutError');
    expect(errors[0]?.error.message).toMatch(/within 30 ms/);
  });

  test('a store that keeps failing is left alone, probed once per cooldown, and used again once it answers', async () => {
    const clock = fakeClock();
    const store = new FlakyStore();
    const limiter = createLimiter({ rate: '100r/s', store, clock, onStoreError: 'fail-open' });
    const recovered = collect(limiter, 'storeRecovered');
    store.mode = 'throw';
    for (let i = 0; i < 10; i++) await limiter.consume('k');
    expect(store.calls).toBe(3); // the circuit opened after three failures
    clock.advance(250);
    await limiter.consume('k'); // the one probe, failing again
    await limiter.consume('k');
    expect(store.calls).toBe(4);
    store.mode = 'ok';
    clock.advance(249);
    expect((await limiter.consume('k')).degraded).toBe('fail-open');
    expect(store.calls).toBe(4);
    clock.advance(1);
    const probe = await limiter.consume('k');
    expect(probe.degraded).toBeUndefined();
    expect(recovered).toEqual([{ downMs: 500, failures: 4 }]);
    const after = await limiter.consume('k');
    expect(after.degraded).toBeUndefined();
    expect(store.calls).toBe(6);
  });

  test('a listener that throws never breaks a request', async () => {
    const store = new FlakyStore();
    const limiter = createLimiter({ rate: '1r/m', store, onStoreError: 'fail-closed' });
    const emitWarning = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      limiter.on('limited', () => {
        throw new Error('listener bug');
      });
      limiter.on('storeError', () => {
        throw new Error('listener bug');
      });
      await limiter.consume('k');
      store.mode = 'throw';
      await expect(limiter.consume('k')).resolves.toMatchObject({ allowed: false });
      await expect(limiter.consume('k')).resolves.toMatchObject({ allowed: false });
      // reported once, as a process warning, and otherwise ignored
      expect(emitWarning).toHaveBeenCalledTimes(1);
      expect(String(emitWarning.mock.calls[0]?.[0])).toMatch(/listener threw.*listener bug/);
    } finally {
      emitWarning.mockRestore();
    }
  });

  test('off() removes a listener', async () => {
    const limiter = createLimiter({ rate: '1r/m' });
    const seen: Decision[] = [];
    const listener = (d: Decision) => seen.push(d);
    limiter.on('limited', listener);
    await limiter.consume('k');
    await limiter.consume('k');
    limiter.off('limited', listener);
    await limiter.consume('k');
    expect(seen).toHaveLength(1);
  });

  test.each([
    [{ onStoreError: 'fail' }, 'onStoreError'],
    [{ onStoreError: { insurance: {} } }, 'onStoreError.insurance'],
    [{ onStoreError: { insurance: new MemoryStore(), instances: 0 } }, 'onStoreError.instances'],
    [{ onStoreError: { insurance: new MemoryStore(), spare: 1 } }, 'onStoreError.spare'],
    [{ timeoutMs: 0 }, 'timeoutMs'],
    [{ timeoutMs: 2.5 }, 'timeoutMs'],
  ])('%j is a SluiceConfigError on %s', (options, option) => {
    expect(() => createLimiter({ rate: '1r/s', ...(options as object) })).toThrow(SluiceConfigError);
    try {
      createLimiter({ rate: '1r/s', ...(options as object) });
    } catch (e) {
      expect((e as SluiceConfigError).option).toBe(option);
    }
  });
});
