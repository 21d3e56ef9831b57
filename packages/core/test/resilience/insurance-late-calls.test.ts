import Redis from 'ioredis';
import {
  consumeAll,
  createLimiter,
  MemoryStore,
  RedisStore,
  type AlgorithmName,
  type Decision,
  type Limiter,
} from '../../src';
import { fakeClock } from '../contract/fake-clock';
import { useRedisServer } from '../harness/redis-fixtures';
import { startTcpProxy, type TcpProxy } from '../harness/tcp-proxy';

/**
 * A request decided by the insurance store because its Redis call missed `timeoutMs` is not
 * also charged in Redis when that call lands late: after Redis recovers, each key's state in
 * Redis is what the requests Redis decided took, and nothing more. Over a real redis-server
 * behind a TCP proxy that stalls (holds every packet, then delivers them in order) or delays
 * each way, batching on and off. The limiters' clock is fixed, so Redis's state is exact and
 * read at that time; the stalls last real time (the server's clock decides what is late).
 */
const redis = useRedisServer();
const TIMEOUT_MS = 200;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let prefixes = 0;

/** A limiter's store on its own connection through a proxy, and a direct reader of Redis's state. */
interface Rig {
  readonly proxy: TcpProxy;
  readonly store: RedisStore;
  readonly clock: ReturnType<typeof fakeClock>;
  limiter(algorithm: AlgorithmName): Limiter;
  /** What Redis holds for a limiter's key, at the limiters' time: its `remaining`. */
  remainingInRedis(limiter: Limiter, key?: string): Promise<number>;
  /** Every call the proxy held or delayed has been answered, and what their answers sent too. */
  settled(): Promise<void>;
  close(): Promise<void>;
}

async function rig(batch: boolean): Promise<Rig> {
  const proxy = await startTcpProxy(redis.server().port);
  const client = new Redis({ host: '127.0.0.1', port: proxy.port });
  await client.ping();
  const store = new RedisStore({ client, ...(batch ? {} : { batch: false }) });
  const reader = new RedisStore({ client: redis.client() });
  const clock = fakeClock();
  const prefixOf = new Map<Limiter, string>();
  return {
    proxy,
    store,
    clock,
    limiter(algorithm) {
      const prefix = `late-${++prefixes}`;
      const limiter = createLimiter({
        algorithm,
        rate: '10/1h',
        store,
        prefix,
        clock,
        timeoutMs: TIMEOUT_MS,
        onStoreError: { insurance: new MemoryStore() },
        // The block cache would answer refusals itself; each decision here is the store's.
        blockCache: false,
      });
      prefixOf.set(limiter, prefix);
      return limiter;
    },
    async remainingInRedis(limiter, key = 'k') {
      const prefix = prefixOf.get(limiter) as string;
      const verdict = await reader.consume({ prefix, key, policy: limiter.policy, cost: 0, nowMs: clock() });
      return verdict.remaining;
    },
    async settled() {
      // In order on the connection: the held calls' answers come before the ping's, and the
      // give-backs they started are sent before the second ping.
      await client.ping();
      await pause(10);
      await client.ping();
    },
    async close() {
      client.disconnect();
      await proxy.close();
    },
  };
}

const by = (decisions: readonly Decision[]) => decisions.map((d) => `${d.allowed}/${d.degraded ?? 'redis'}`);

describe.each([
  ['batching', true],
  ['batch: false', false],
])('insurance decisions are not charged in Redis too (%s)', (_name, batch) => {
  let r: Rig;
  beforeEach(async () => {
    r = await rig(batch);
  });
  afterEach(() => r.close());

  test.each(['gcra', 'fixed-window', 'sliding-log'] as const)(
    '%s: calls held by a stall arrive past their deadline and take nothing',
    async (algorithm) => {
      const limiter = r.limiter(algorithm);
      const before = await Promise.all([1, 2, 3].map(() => limiter.consume('k')));
      expect(by(before)).toEqual(Array(3).fill('true/redis'));

      r.proxy.setBlackhole(true);
      // Two waves: with batching, the first wave's calls go alone; the second waits for their
      // places, which free at the first wave's deadline, and goes as one batch.
      const first = [1, 2, 3, 4].map(() => limiter.consume('k'));
      await pause(TIMEOUT_MS / 2);
      const second = [1, 2, 3, 4].map(() => limiter.consume('k'));
      const insured = await Promise.all([...first, ...second]);
      expect(by(insured)).toEqual(Array(8).fill('true/insurance'));
      // Healed past every deadline: the held calls reach Redis now.
      await pause(TIMEOUT_MS);
      r.proxy.setBlackhole(false);
      await r.settled();

      expect(await r.remainingInRedis(limiter)).toBe(7);
    },
  );

  test.each(['gcra', 'token-bucket', 'leaky-bucket'] as const)(
    '%s: a call decided in time whose answer lands late is given back',
    async (algorithm) => {
      const limiter = r.limiter(algorithm);
      const before = await Promise.all([1, 2, 3].map(() => limiter.consume('k')));
      expect(by(before)).toEqual(Array(3).fill('true/redis'));

      // Each way 3/4 of the timeout: the script runs before the deadline, its answer comes after.
      r.proxy.setLatency((TIMEOUT_MS * 3) / 4);
      const insured = await Promise.all([1, 2].map(() => limiter.consume('k')));
      expect(by(insured)).toEqual(Array(2).fill('true/insurance'));
      r.proxy.setLatency(0);
      await pause((TIMEOUT_MS * 3) / 4);
      await r.settled();

      expect(await r.remainingInRedis(limiter)).toBe(7);
    },
  );

  test('several limits of one request (consumeAll): a late answer gives back every part, by its receipts', async () => {
    const windowed = r.limiter('fixed-window');
    const logged = r.limiter('sliding-log');
    const both = () =>
      consumeAll([
        { limiter: windowed, key: 'k' },
        { limiter: logged, key: 'k' },
      ]);
    const before = [await both(), await both(), await both()];
    expect(before.flat().every((d) => d?.allowed === true && d.degraded === undefined)).toBe(true);

    r.proxy.setLatency((TIMEOUT_MS * 3) / 4);
    const late = await both();
    expect(late.map((d) => d?.degraded)).toEqual(['insurance', 'insurance']);
    r.proxy.setLatency(0);
    await pause((TIMEOUT_MS * 3) / 4);
    await r.settled();

    expect(await r.remainingInRedis(windowed)).toBe(7);
    expect(await r.remainingInRedis(logged)).toBe(7);
  });
});

/**
 * What instances admit within one window while Redis is stalled: what Redis admitted before,
 * then each instance's insurance store, which starts with nothing of what Redis counted. The
 * figures the README gives.
 */
describe('the insurance bound: N instances admit up to N + 1 times the limit', () => {
  const admittedBy = (decisions: readonly Decision[], by: string) =>
    decisions.filter((d) => d.allowed && (d.degraded ?? 'redis') === by).length;

  test.each([
    [1, 1, 20],
    [2, 1, 30],
    [3, 1, 40],
    [2, 2, 20],
    [3, 3, 19],
  ])('%i instance(s) with instances: %i admit %i of a limit of 10', async (count, instances, total) => {
    const r = await rig(true);
    try {
      const prefix = `bound-${++prefixes}`;
      const limiters = Array.from({ length: count }, () =>
        createLimiter({
          algorithm: 'fixed-window',
          rate: '10/1h',
          store: r.store,
          prefix,
          clock: r.clock,
          timeoutMs: TIMEOUT_MS,
          onStoreError: { insurance: new MemoryStore(), instances },
          blockCache: false,
        }),
      );
      // Redis first: the limit, shared.
      const shared: Decision[] = [];
      for (let i = 0; i < 12; i++) shared.push(await (limiters[i % count] as Limiter).consume('k'));
      expect(admittedBy(shared, 'redis')).toBe(10);
      // Then Redis stalls: each instance decides alone.
      r.proxy.setBlackhole(true);
      const alone = (
        await Promise.all(limiters.map((l) => Promise.all(Array.from({ length: 12 }, () => l.consume('k')))))
      ).flat();
      r.proxy.setBlackhole(false);
      await r.settled();
      expect(alone.every((d) => d.degraded === 'insurance')).toBe(true);
      expect(admittedBy(shared, 'redis') + admittedBy(alone, 'insurance')).toBe(total);
    } finally {
      await r.close();
    }
  });
});
