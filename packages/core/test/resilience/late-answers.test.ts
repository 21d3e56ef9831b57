import {
  createLimiter,
  MemoryStore,
  type RulesRequest,
  type Store,
  type StoreRequest,
  type Verdict,
} from '../../src';
import { fakeClock } from '../contract/fake-clock';

/**
 * Any remote store, not only Redis: an answer that comes after the guard decided the request by
 * `onStoreError` has what it took given back (the store's `giveBack` / `giveBackRules`), once,
 * and only when it took something. Fake timers: the store answers when the test says.
 */
beforeEach(() => jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] }));
afterEach(() => jest.useRealTimers());

/** A remote-looking store over a MemoryStore whose answers the test releases, late or not. */
class HeldStore implements Store {
  readonly #inner = new MemoryStore();
  readonly held: Array<() => void> = [];
  readonly givenBack: Array<{ key: string; cost: number; rules: boolean }> = [];
  failGiveBack = false;

  consume(request: StoreRequest): Promise<Verdict> {
    return new Promise((resolve) => this.held.push(() => resolve(this.#inner.consumeSync(request))));
  }

  consumeRules(request: RulesRequest): Promise<Verdict[]> {
    return new Promise((resolve) => this.held.push(() => resolve(this.#inner.consumeRulesSync(request))));
  }

  giveBack(request: StoreRequest): Promise<void> {
    this.givenBack.push({ key: request.key, cost: request.cost, rules: false });
    if (this.failGiveBack) throw new Error('ECONNRESET');
    return this.#inner.giveBack(request);
  }

  giveBackRules(request: RulesRequest): Promise<void> {
    this.givenBack.push({ key: request.key, cost: request.cost, rules: true });
    return this.#inner.giveBackRules(request);
  }

  reset(request: Omit<StoreRequest, 'cost'>): Promise<void> {
    return this.#inner.reset(request);
  }

  resetRules(request: Omit<RulesRequest, 'cost'>): Promise<void> {
    return this.#inner.resetRules(request);
  }
}

/** Lets the guard's deadline pass: its timer, then the turn it waits before deciding. */
async function pastDeadline(): Promise<void> {
  jest.advanceTimersByTime(51);
  await new Promise((resolve) => setImmediate(resolve));
}

function limiterOn(store: HeldStore, rate: string | readonly string[] = '2/1h') {
  return createLimiter({
    rate: rate as string,
    store,
    clock: fakeClock(),
    timeoutMs: 50,
    onStoreError: { insurance: new MemoryStore() },
    blockCache: false,
  });
}

test("an answer after the deadline gives back what it took, once; a refusal's takes nothing back", async () => {
  const store = new HeldStore();
  const limiter = limiterOn(store);
  const pending = [limiter.consume('k', { cost: 2 }), limiter.consume('k')];
  await pastDeadline();
  expect((await Promise.all(pending)).map((d) => d.degraded)).toEqual(['insurance', 'insurance']);
  // Now the store answers both: the first took 2 units, the second was refused (the limit is 2).
  for (const release of store.held.splice(0)) release();
  await new Promise((resolve) => setImmediate(resolve));
  expect(store.givenBack).toEqual([{ key: 'k', cost: 2, rules: false }]);
  // In time, nothing is given back.
  const inTime = limiter.consume('k');
  store.held.splice(0).forEach((release) => release());
  expect((await inTime).degraded).toBeUndefined();
  expect(store.givenBack).toHaveLength(1);
});

test('several rules: the late answer gives back every rule', async () => {
  const store = new HeldStore();
  const limiter = limiterOn(store, ['2/1h', '5/1d']);
  const pending = limiter.consume('k');
  await pastDeadline();
  expect((await pending).degraded).toBe('insurance');
  store.held.splice(0).forEach((release) => release());
  await new Promise((resolve) => setImmediate(resolve));
  expect(store.givenBack).toEqual([{ key: 'k', cost: 1, rules: true }]);
});

test('a give-back that throws is lost and reported, never thrown from the store answer', async () => {
  const store = new HeldStore();
  store.failGiveBack = true;
  const limiter = limiterOn(store);
  const errors: unknown[] = [];
  limiter.on('storeError', ({ error }) => errors.push(error));
  const pending = limiter.consume('k');
  await pastDeadline();
  await pending;
  store.held.splice(0).forEach((release) => release());
  await new Promise((resolve) => setImmediate(resolve));
  expect(store.givenBack).toHaveLength(1);
  expect(errors.map((e) => (e as Error).message)).toContain('ECONNRESET');
});
