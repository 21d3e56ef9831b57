import { ALGORITHMS, type AlgorithmName } from '../../src';
import { useRedisServer } from '../harness/redis-fixtures';
import { scriptCalls } from '../harness/script-calls';
import { WorkerPool, type RunOptions, type RunResult } from '../redis/worker-pool';

/**
 * Issue 7, leasing across processes: four OS processes, each with its own limiter leasing SIZE
 * units per script call, share one Redis and fire at one hot key at the same moment.
 *
 * The issue asks for admissions between L and L + 4 × SIZE. sluice guarantees more: a lease is
 * one consume of SIZE units from the shared limit, so leasing never admits beyond L. It can
 * admit less (units leased and not spent within maxStaleMs are dropped), but here every process
 * has more requests than its leases and maxStaleMs outlasts a run, so exactly L must pass.
 *
 * L is 1000, not 100: once the limit is spent, each process needs at least one call to learn it
 * (two: a refused lease, then its own unit, before it refuses locally), and with
 * L = 100 those alone would exceed the 20 % allowance over L / SIZE = 10 calls, however
 * good the leasing.
 */
const LIMIT = 1000;
const SIZE = 10;
const WORKERS = 4;
/** Each process alone asks for more than the limit. */
const OVERLOAD = 1500;
/** At most 1/SIZE script calls per admission, plus 20 % (issue 7). */
const MAX_CALLS_PER_ADMISSION = (1 / SIZE) * 1.2;
/** An overloaded run takes well under a second on an idle machine; room for a busy one. */
const OVERLOADED_RUN_TIMEOUT_MS = 60_000;

// leaky-bucket delays its excess, which cannot be leased (resolveLease refuses it).
const LEASABLE = ALGORITHMS.filter((a): a is Exclude<AlgorithmName, 'leaky-bucket'> => a !== 'leaky-bucket');

const redis = useRedisServer();

describe(`${WORKERS} processes leasing ${SIZE} units at a time on one hot key`, () => {
  let pool: WorkerPool;
  beforeAll(async () => {
    // No clock skew: what is measured here is leasing, not clocks.
    pool = await WorkerPool.start(redis.server().port, new Array<number>(WORKERS).fill(0));
  }, 120_000);
  afterAll(() => pool?.stop());

  /** One run, with the script calls Redis served for it (EVALSHA + EVAL, counted from zero). */
  const leasedRun = async (
    algorithm: AlgorithmName,
    options: Pick<RunOptions, 'prefix' | 'perWorker'>,
  ): Promise<RunResult & { calls: number }> => {
    const admin = redis.client();
    await admin.config('RESETSTAT');
    const result = await pool.run({
      ...options,
      key: 'sku:hot',
      // A day: gcra frees one unit per 86 s, so nothing refills while a run lasts.
      policy: { algorithm, rate: `${LIMIT}/1d` },
      lease: { size: SIZE, maxStaleMs: '1m' },
    });
    return { ...result, calls: await scriptCalls(admin) };
  };

  test.each(LEASABLE)(
    '%s admits exactly the limit under overload, none degraded',
    async (algorithm) => {
      const { admitted, delayed, degraded, errors } = await leasedRun(algorithm, {
        prefix: `lease-procs-${algorithm}`,
        perWorker: OVERLOAD,
      });
      // Within the bound [L, L + 4 × SIZE] at its lowest end: leasing never over-admits.
      expect({ admitted, delayed, degraded, errors }).toEqual({
        admitted: LIMIT,
        delayed: 0,
        degraded: 0,
        errors: [],
      });
    },
    OVERLOADED_RUN_TIMEOUT_MS,
  );

  // Leasing sits above the store, so the number of calls is the same for every algorithm.
  test('while the limit lasts, one script call per lease', async () => {
    const { admitted, degraded, errors, calls } = await leasedRun('gcra', {
      prefix: 'lease-procs-exact',
      perWorker: LIMIT / WORKERS,
    });
    expect({ admitted, degraded, errors, calls }).toEqual({
      admitted: LIMIT,
      degraded: 0,
      errors: [],
      calls: LIMIT / SIZE,
    });
  });

  // Requests queued behind a refused lease fetch reuse the store's refusal: once the limit is
  // spent, each process makes two calls (a refused lease, then its own unit), not two per request
  // (which was 100 + 2 × 5000 calls, 10 per admission).
  test.each(LEASABLE)(
    '%s under overload: at most 1.2 / size script calls per admission',
    async (algorithm) => {
      const { admitted, calls } = await leasedRun(algorithm, {
        prefix: `lease-procs-overload-${algorithm}`,
        perWorker: OVERLOAD,
      });
      expect(admitted).toBe(LIMIT);
      expect(calls).toBeGreaterThanOrEqual(LIMIT / SIZE);
      expect(calls / admitted).toBeLessThanOrEqual(MAX_CALLS_PER_ADMISSION);
    },
    OVERLOADED_RUN_TIMEOUT_MS,
  );
});
