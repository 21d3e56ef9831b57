import { ALGORITHMS, type AlgorithmName, type PolicyOptions } from '../../src';
import { useRedisServer } from '../harness/redis-fixtures';
import { WorkerPool } from './worker-pool';

/**
 * Four OS processes, each with its own limiter and connection, share one Redis and fire 250
 * consumes each at one key at the same moment: exactly the limit (100) passes, for every
 * algorithm. The rates are slow enough that nothing refills while the burst runs, so the count
 * must be exact.
 */
const LIMIT = 100;
const PER_WORKER = 250;

const policy = (
  algorithm: AlgorithmName,
  rate: string,
  extra: Partial<PolicyOptions> = {},
): PolicyOptions => ({
  algorithm,
  rate,
  ...(algorithm === 'leaky-bucket' && extra.nodelay === undefined ? { nodelay: true } : {}),
  ...extra,
});

const redis = useRedisServer();

describe('4 processes, 1 000 concurrent consumes on one key', () => {
  let pool: WorkerPool;
  beforeAll(async () => {
    pool = await WorkerPool.start(redis.server().port, [0, 0, 0, 0]);
  }, 120_000);
  afterAll(() => pool?.stop());

  // '100/10m': a whole quota at once (burst = limit - 1), then one unit per 6 s.
  test.each(ALGORITHMS)('%s admits exactly the limit', async (algorithm) => {
    const result = await pool.run({
      key: 'hot',
      prefix: `conc-${algorithm}`,
      policy: policy(algorithm, '100/10m'),
      perWorker: PER_WORKER,
    });
    expect(result).toEqual({ admitted: LIMIT, delayed: 0, degraded: 0, errors: [] });
  });

  test('leaky-bucket without nodelay admits exactly the limit, the excess delayed (nginx)', async () => {
    const result = await pool.run({
      key: 'hot',
      prefix: 'conc-leaky-delay',
      policy: policy('leaky-bucket', '100/10m', { nodelay: false }),
      perWorker: PER_WORKER,
    });
    expect(result).toEqual({ admitted: LIMIT, delayed: LIMIT - 1, degraded: 0, errors: [] });
  });
});

describe('clock skew: two processes 5 min behind, two 5 min ahead', () => {
  let pool: WorkerPool;
  beforeAll(async () => {
    pool = await WorkerPool.start(redis.server().port, [-300_000, -300_000, 300_000, 300_000]);
  }, 120_000);
  afterAll(() => pool?.stop());

  // '100/500s': shorter than the 10 min between the clocks, so deciding on the app servers' clocks
  // would refill or reopen the window for the processes ahead (the control test shows it); and
  // one unit refills every 5 s, so a burst slowed by a loaded machine still finds none refilled.
  test.each(ALGORITHMS)('%s on the server clock admits exactly the limit', async (algorithm) => {
    const result = await pool.run({
      key: 'skewed',
      prefix: `skew-${algorithm}`,
      policy: policy(algorithm, '100/500s'),
      perWorker: PER_WORKER,
    });
    expect(result).toEqual({ admitted: LIMIT, delayed: 0, degraded: 0, errors: [] });
  });

  test('control: deciding on the skewed app clocks (a limiter given clock: Date.now) exceeds the limit', async () => {
    const options = {
      key: 'skewed',
      prefix: 'skew-control',
      policy: policy('gcra', '100/500s'),
      perWorker: PER_WORKER,
      sendClock: true,
    };
    const behind = await pool.run({ ...options, workers: [0, 1] });
    const ahead = await pool.run({ ...options, workers: [2, 3] });
    // Twice the limit: the processes ahead see the first ones' arrivals a minute in the past.
    expect([behind, ahead]).toEqual([
      { admitted: LIMIT, delayed: 0, degraded: 0, errors: [] },
      { admitted: LIMIT, delayed: 0, degraded: 0, errors: [] },
    ]);
  });
});
