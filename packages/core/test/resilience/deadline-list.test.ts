import { DeadlineList } from '../../src/resilience/deadline-list';
import { StoreTimeoutError } from '../../src/resilience/store-errors';
import { heapUsed, MB } from '../harness/heap';

/** A promise settled from outside, as a store's reply is. */
function reply<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Where a bounded call is: its value, its error, or still pending. */
function watch<T>(promise: Promise<T>) {
  const seen: { value?: T; error?: unknown } = {};
  promise.then(
    (value) => (seen.value = value),
    (error: unknown) => (seen.error = error),
  );
  return seen;
}

describe('DeadlineList (fake timers)', () => {
  // Jest's fake setImmediate runs on the next tick: each verdict is looked at 1 ms after it is due.
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  test('each call settles as its reply does, or fails with StoreTimeoutError once its own timeoutMs is up, oldest first', async () => {
    const list = new DeadlineList(50);
    const first = reply<string>();
    const a = watch(list.bound(first.promise));
    await jest.advanceTimersByTimeAsync(20);
    const second = reply<string>();
    const b = watch(list.bound(second.promise));
    const third = reply<string>();
    const c = watch(list.bound(third.promise));
    first.resolve('a'); // the oldest settles: the others keep their own time
    await jest.advanceTimersByTimeAsync(0);
    expect(a).toEqual({ value: 'a' });
    third.reject(new Error('refused'));
    await jest.advanceTimersByTimeAsync(49); // 69 ms: b is due at 70
    expect(b).toEqual({});
    expect((c.error as Error).message).toBe('refused');
    await jest.advanceTimersByTimeAsync(1); // due; its verdict a turn later
    expect(b).toEqual({});
    await jest.advanceTimersByTimeAsync(1);
    expect(b.error).toBeInstanceOf(StoreTimeoutError);
    expect(b.error).toMatchObject({ timeoutMs: 50, eventLoopLagMs: 0 });
    second.resolve('too late'); // a reply after the verdict changes nothing
    await jest.advanceTimersByTimeAsync(0);
    expect(b.value).toBeUndefined();
  });

  test('one timer for any number of calls waiting, where a timer each would be a thousand', async () => {
    const list = new DeadlineList(50);
    const replies = Array.from({ length: 1000 }, () => reply<number>());
    const seen = replies.map((r) => watch(list.bound(r.promise)));
    expect(jest.getTimerCount()).toBe(1);
    replies.forEach((r, i) => i % 2 === 0 && r.resolve(i));
    await jest.advanceTimersByTimeAsync(51);
    expect(seen.filter((s) => s.error instanceof StoreTimeoutError)).toHaveLength(500);
    expect(seen.filter((s) => s.value !== undefined)).toHaveLength(500);
    expect(jest.getTimerCount()).toBe(0); // nothing waits: nothing armed again
  });

  test('clearWhenIdle: the timer goes with the last call waiting, and calls after it are still bounded', async () => {
    const kept = new DeadlineList(50);
    const cleared = new DeadlineList(50, { clearWhenIdle: true });
    const answered = reply<number>();
    await kept.bound(Promise.resolve(1));
    expect(jest.getTimerCount()).toBe(1); // left to fire: no timer per call
    await jest.advanceTimersByTimeAsync(51);
    expect(jest.getTimerCount()).toBe(0);
    const first = watch(cleared.bound(answered.promise));
    const second = reply<number>();
    const late = watch(cleared.bound(second.promise));
    expect(jest.getTimerCount()).toBe(1);
    answered.resolve(1);
    await jest.advanceTimersByTimeAsync(0);
    expect(first).toEqual({ value: 1 });
    expect(jest.getTimerCount()).toBe(1); // one call still waits
    second.resolve(2);
    await jest.advanceTimersByTimeAsync(0);
    expect(late).toEqual({ value: 2 });
    expect(jest.getTimerCount()).toBe(0);
    const silent = watch(cleared.bound(new Promise<number>(() => undefined)));
    await jest.advanceTimersByTimeAsync(51);
    expect(silent.error).toBeInstanceOf(StoreTimeoutError);
    expect(jest.getTimerCount()).toBe(0);
  });

  test('calls started after the oldest are bounded from their own start, through a timer armed again', async () => {
    const list = new DeadlineList(30);
    const seen: Array<{ error?: unknown; value?: unknown }> = [];
    for (let i = 0; i < 4; i++) {
      seen.push(watch(list.bound(reply<never>().promise)));
      await jest.advanceTimersByTimeAsync(10);
    }
    // 40 ms: the calls started at 0 and 10 are past their time, those at 20 and 30 not.
    await jest.advanceTimersByTimeAsync(1);
    expect(seen.map((s) => s.error instanceof StoreTimeoutError)).toEqual([true, true, false, false]);
    await jest.advanceTimersByTimeAsync(10);
    expect(seen.map((s) => s.error instanceof StoreTimeoutError)).toEqual([true, true, true, false]);
    await jest.advanceTimersByTimeAsync(10);
    expect(seen.every((s) => s.error instanceof StoreTimeoutError)).toBe(true);
  });
});

describe('DeadlineList (real timers)', () => {
  test('the verdict waits one turn: a reply that comes in the turn the time is found up wins', async () => {
    const list = new DeadlineList(20);
    const answer = reply<string>();
    const bounded = watch(list.bound(answer.promise));
    // The reply lands in an I/O callback the loop reaches only after the expired timer.
    setTimeout(() => setImmediate(() => answer.resolve('in time')), 1);
    const until = performance.now() + 60;
    while (performance.now() < until);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(bounded).toEqual({ value: 'in time' });
  });

  test('a stall past the time is reported as eventLoopLagMs', async () => {
    const list = new DeadlineList(20);
    const bounded = list.bound(new Promise<never>(() => undefined));
    const until = performance.now() + 80;
    while (performance.now() < until);
    const error = (await bounded.catch((e: unknown) => e)) as StoreTimeoutError;
    expect(error).toBeInstanceOf(StoreTimeoutError);
    expect(error.eventLoopLagMs).toBeGreaterThanOrEqual(55);
    expect(error.eventLoopLagMs).toBeLessThan(80);
  });

  test('a settled call is unlinked at once: 200 000 answered calls behind one pending hold nothing', async () => {
    const list = new DeadlineList(60_000);
    const oldest = reply<string>();
    const pending = list.bound(oldest.promise);
    const before = heapUsed();
    for (let i = 0; i < 200_000; i++) await list.bound(Promise.resolve({ payload: new Array(8).fill(i) }));
    // Held until the timer fired, each call would keep its node, promise and value (> 100 B).
    expect((heapUsed() - before) / MB).toBeLessThan(4);
    oldest.resolve('done'); // settled: nothing left to time out after the test
    await expect(pending).resolves.toBe('done');
  });
});
