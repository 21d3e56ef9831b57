import { get as httpGet } from 'node:http';
import type { Response } from 'supertest';
import type { FakeClock } from '../../core/test/contract/fake-clock';
import { MOUNTS, type ContractOptions, type Mount, type TestApp } from './drivers';

/** What the delay contract needs of the adapter contract around it. */
export interface DelayContext {
  serve(options: ContractOptions, mount?: Mount): Promise<TestApp>;
  get(app: TestApp): PromiseLike<Response>;
  /** The test's fake clock (a new one per test). */
  clock(): FakeClock;
}

/** Lets the event loop run (sockets, promises) without moving any fake timer. */
export async function settle(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise((resolve) => setImmediate(resolve));
}

/**
 * Runs the loop until `condition` holds: bounded by wall time (5 s, `Date` is never faked here),
 * never a timed sleep. A round count alone was too short on a loaded machine.
 */
export async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Fakes the timers that hold requests, leaving the loop (sockets, `setImmediate`) and `Date` real. */
export function fakeTimers(): void {
  jest.useFakeTimers({
    doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask', 'Date', 'hrtime', 'performance'],
  });
}

/**
 * nginx's burst without `nodelay`, on every adapter: an excess request is held for its delay,
 * then run; a client that leaves while held runs nothing and gives its turn back.
 */
export function describeDelayContract({ serve, get, clock }: DelayContext): void {
  describe('delay (nginx burst without nodelay)', () => {
    const delayed = { algorithm: 'leaky-bucket', rate: '1r/s', burst: 2 };

    /** A request that must be held exactly `delayMs`: not run 1 ms before, answered then. */
    const heldFor = async (app: TestApp, delayMs: number): Promise<Response> => {
      const handled = app.handled;
      let done = false;
      const pending = get(app).then((res) => {
        done = true;
        return res;
      });
      await until(() => jest.getTimerCount() > 0, 'the request is held');
      jest.advanceTimersByTime(delayMs - 1);
      await settle();
      expect([done, app.handled]).toEqual([false, handled]);
      jest.advanceTimersByTime(1);
      return pending;
    };

    /** A client that connects, is held, and leaves before its turn. */
    const leaveWhileHeld = async (app: TestApp): Promise<void> => {
      const client = httpGet(`${app.url}/`);
      client.on('error', () => undefined);
      await until(() => jest.getTimerCount() > 0, 'the request is held');
      client.destroy();
      await until(() => jest.getTimerCount() === 0, 'the hold notices the client left');
    };

    test.each(MOUNTS)('holds an excess request for its delay, then runs it (%s)', async (mount) => {
      const app = await serve({ ...delayed, clock: clock() }, mount);
      expect((await get(app)).status).toBe(200);
      fakeTimers();
      const res = await heldFor(app, 1000);
      expect(res.status).toBe(200);
      expect(app.handled).toBe(2);
    });

    test('runs nothing for a client that left during the delay', async () => {
      const app = await serve({ ...delayed, clock: clock() });
      expect((await get(app)).status).toBe(200);
      fakeTimers();
      await leaveWhileHeld(app);
      jest.advanceTimersByTime(10_000);
      await settle();
      expect(app.handled).toBe(1);
    });

    test.each(MOUNTS)('a client that left gives its turn back to the next request (%s)', async (mount) => {
      const app = await serve({ ...delayed, clock: clock() }, mount);
      expect((await get(app)).status).toBe(200);
      fakeTimers();
      await leaveWhileHeld(app);
      // Its turn (1 s) went back: the next request waits 1 s, not 2.
      expect((await heldFor(app, 1000)).status).toBe(200);
      expect(app.handled).toBe(2);
    });
  });
}
