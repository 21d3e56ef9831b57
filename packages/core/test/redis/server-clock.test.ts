import fc from 'fast-check';
import type { ScriptClient } from '../../src/stores/redis/redis-client';
import { DRIFT, MAX_AGE_MS, REFRESH_MS, RTT_SHARE, ServerClock } from '../../src/stores/redis/server-clock';

/**
 * The mapping of a caller's deadline onto the Redis server's clock only ever makes the server
 * give up earlier than the caller, never later, whatever the delays of the reading's two ways;
 * it is early by about the way back. Fake timers: `performance.now()` is the test's.
 */
beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

/** A server whose clock runs `offset` ms ahead of `performance.now()`, answering TIME after `out` and `back` ms. */
function server(offset: number, ways: () => [out: number, back: number], nodeOf?: (slot: number) => string) {
  let readings = 0;
  const client = {
    isCluster: nodeOf !== undefined,
    nodeOf,
    time: () => {
      readings++;
      const [out, back] = ways();
      return new Promise<number>((resolve) => {
        setTimeout(() => {
          const read = Math.floor(performance.now() + offset);
          setTimeout(() => resolve(read), back);
        }, out);
      });
    },
  } as unknown as ScriptClient;
  return { clock: new ServerClock(client), readings: () => readings };
}

/** Lets the reading's timers and its promise's reactions run. */
async function elapse(ms: number): Promise<void> {
  await jest.advanceTimersByTimeAsync(ms);
}

test('never later than the caller, whatever the delays each way; early by about the way back', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1e12, max: 2e12 }), // an epoch ms ahead of performance.now()
      fc.integer({ min: 0, max: 20 }),
      fc.integer({ min: 0, max: 20 }),
      fc.integer({ min: 200, max: 2000 }), // a round trip of up to a quarter of it
      async (offset, out, back, timeoutMs) => {
        const { clock } = server(offset, () => [out, back]);
        const start = performance.now();
        expect(clock.deadline('k', 0, start + timeoutMs, start)).toBeUndefined(); // nothing read yet
        await elapse(out + back + 1);
        const now = performance.now();
        const deadline = now + timeoutMs;
        const mapped = clock.deadline('k', 0, deadline, now);
        expect(mapped).toBeDefined();
        // The server's time when the caller gives up, and how much earlier the mapping is.
        const early = deadline + offset - (mapped as number);
        expect(early).toBeGreaterThanOrEqual(1);
        expect(early).toBeLessThan(back + 3 + DRIFT * (deadline - now));
      },
    ),
    { numRuns: 200 },
  );
});

test('read about once a second while deadlines are asked, one reading on its way at a time', async () => {
  const { clock, readings } = server(5_000, () => [1, 1]);
  const ask = () => clock.deadline('k', 0, performance.now() + 100, performance.now());
  ask();
  ask(); // its reading is on its way
  expect(readings()).toBe(1);
  await elapse(2);
  for (let i = 0; i <= 10; i++) {
    ask();
    await elapse(REFRESH_MS / 10);
  }
  expect(readings()).toBe(2);
  // On a Cluster, each master has its own clock.
  const masters = server(
    5_000,
    () => [1, 1],
    (slot) => (slot < 8192 ? 'a:1' : 'b:1'),
  );
  masters.clock.deadline('k', 0, performance.now() + 100, performance.now());
  masters.clock.deadline('k', 100, performance.now() + 100, performance.now());
  masters.clock.deadline('k', 9000, performance.now() + 100, performance.now());
  expect(masters.readings()).toBe(2);
});

test('no deadline from a reading too loose for the timeout, or too old', async () => {
  // Both ways 15 ms: a round trip of 30 ms is more than a quarter of a 100 ms timeout.
  const loose = server(0, () => [15, 15]);
  loose.clock.deadline('k', 0, performance.now() + 100, performance.now());
  await elapse(30);
  const now = performance.now();
  expect(30).toBeGreaterThan(RTT_SHARE * 100);
  expect(loose.clock.deadline('k', 0, now + 100, now)).toBeUndefined();
  expect(loose.clock.deadline('k', 0, now + 200, now)).toBeDefined();

  // A server that stops answering: its last reading ages out.
  let answering = true;
  const client = {
    isCluster: false,
    time: () => (answering ? Promise.resolve(Math.floor(performance.now())) : new Promise(() => undefined)),
  } as unknown as ScriptClient;
  const old = new ServerClock(client);
  old.deadline('k', 0, performance.now() + 100, performance.now());
  await elapse(0);
  answering = false;
  expect(old.deadline('k', 0, performance.now() + 100, performance.now())).toBeDefined();
  await elapse(MAX_AGE_MS + 1);
  expect(old.deadline('k', 0, performance.now() + 100, performance.now())).toBeUndefined();
});

test('the tighter of two readings is kept: one read late by a busy process does not replace it', async () => {
  let ways: [number, number] = [1, 1];
  const { clock } = server(0, () => ways);
  clock.deadline('k', 0, performance.now() + 1000, performance.now());
  await elapse(2);
  ways = [1, 200]; // read 200 ms after the server answered
  await elapse(REFRESH_MS);
  clock.deadline('k', 0, performance.now() + 1000, performance.now());
  await elapse(201);
  const now = performance.now();
  const mapped = clock.deadline('k', 0, now + 1000, now) as number;
  // As early as the tight reading made it (give or take its drift), not 200 ms early.
  expect(now + 1000 - mapped).toBeLessThan(10);
});
