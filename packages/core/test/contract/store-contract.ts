import {
  createLimiter,
  type AlgorithmName,
  type Decision,
  type Limiter,
  type LimiterOptions,
  type Store,
} from '../../src';
import { fakeClock, type FakeClock } from './fake-clock';

/** Every algorithm configured so that exactly 5 requests pass at once. */
const CAPACITY = 5;
const CONFIGS: Record<AlgorithmName, Omit<LimiterOptions, 'store' | 'clock' | 'prefix'>> = {
  gcra: { algorithm: 'gcra', rate: '5/1s' },
  'token-bucket': { algorithm: 'token-bucket', rate: '5/1s' },
  'leaky-bucket': { algorithm: 'leaky-bucket', rate: '5/1s', nodelay: true },
  'fixed-window': { algorithm: 'fixed-window', rate: '5/1s' },
  'sliding-window': { algorithm: 'sliding-window', rate: '5/1s' },
  'sliding-log': { algorithm: 'sliding-log', rate: '5/1s' },
};

let prefixes = 0;

/**
 * The store contract: what every store must do for every algorithm, whatever keeps the state.
 * Run unchanged against MemoryStore and RedisStore (standalone and Cluster).
 *
 * @param getStore - returns the store under test (called inside each test, after the caller's beforeAll)
 */
export function describeStoreContract(name: string, getStore: () => Store): void {
  describe(`store contract: ${name}`, () => {
    describe.each(Object.keys(CONFIGS) as AlgorithmName[])('%s', (algorithm) => {
      let clock: FakeClock;
      const make = (extra: Partial<LimiterOptions> = {}): Limiter => {
        const limiter = createLimiter({
          ...CONFIGS[algorithm],
          store: getStore(),
          clock,
          prefix: `contract-${++prefixes}`,
          // The store itself must decide: a slow or failed call must fail the test, not be
          // answered by the insurance store (which would give the same numbers).
          onStoreError: 'fail-closed',
          timeoutMs: 10_000,
          ...extra,
        });
        limiter.on('fallback', (d) => undecided.push(`${d.degraded} for key ${JSON.stringify(d.key)}`));
        return limiter;
      };
      const undecided: string[] = [];
      afterEach(() => {
        expect(undecided).toEqual([]);
        undecided.length = 0;
      });
      const drain = async (limiter: Limiter, key: string, n: number): Promise<Decision[]> => {
        const decisions: Decision[] = [];
        for (let i = 0; i < n; i++) decisions.push(await limiter.consume(key));
        return decisions;
      };

      beforeEach(() => {
        clock = fakeClock();
      });

      test('admits the limit at once, then rejects with reason and retry time', async () => {
        const limiter = make();
        const decisions = await drain(limiter, 'k', CAPACITY + 1);
        expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, true, true, false]);
        expect(decisions.map((d) => d.remaining)).toEqual([4, 3, 2, 1, 0, 0]);
        expect(decisions.every((d) => d.limit === CAPACITY)).toBe(true);
        const last = decisions[CAPACITY] as Decision;
        expect(last.reason).toBe('limited');
        expect(last.retryAfterMs).toBeGreaterThan(0);
        // sliding-window waits into the next window, until this one's weight has decayed enough.
        expect(last.retryAfterMs).toBeLessThanOrEqual(2000);
        expect(last.delayMs).toBe(0);
        for (const d of decisions.slice(0, CAPACITY)) {
          expect(d.retryAfterMs).toBe(0);
          expect(d.reason).toBeUndefined();
          expect(d.resetMs).toBeGreaterThan(0);
          expect(d.resetMs).toBeLessThanOrEqual(2000);
        }
        expect(last.key).toBe('k');
        expect(last.policy.algorithm).toBe(algorithm);
      });

      test('retryAfterMs is exact: one ms earlier is still rejected, at it the request passes', async () => {
        const limiter = make();
        await drain(limiter, 'k', CAPACITY);
        clock.advance(37);
        const rejected = await limiter.consume('k');
        expect(rejected.allowed).toBe(false);
        clock.advance(rejected.retryAfterMs - 1);
        expect((await limiter.consume('k')).allowed).toBe(false);
        clock.advance(1);
        expect((await limiter.consume('k')).allowed).toBe(true);
      });

      test('resetMs is exact: the key is back to its full limit then, and not a millisecond before', async () => {
        const limiter = make();
        const decisions = await drain(limiter, 'k', CAPACITY);
        const { resetMs } = decisions[CAPACITY - 1] as Decision;
        clock.advance(resetMs - 1);
        expect((await limiter.peek('k')).remaining).toBeLessThan(CAPACITY);
        clock.advance(1);
        expect((await limiter.peek('k')).remaining).toBe(CAPACITY);
        expect((await drain(limiter, 'k', CAPACITY)).every((d) => d.allowed)).toBe(true);
      });

      test('time passing restores capacity', async () => {
        const limiter = make();
        await drain(limiter, 'k', CAPACITY);
        expect((await limiter.consume('k')).allowed).toBe(false);
        clock.advance(2000);
        expect((await drain(limiter, 'k', CAPACITY)).every((d) => d.allowed)).toBe(true);
      });

      test('cost > 1 takes that many units, and a cost that does not fit is rejected without taking any', async () => {
        const limiter = make();
        const first = await limiter.consume('k', { cost: 3 });
        expect(first).toMatchObject({ allowed: true, remaining: 2 });
        const tooMuch = await limiter.consume('k', { cost: 3 });
        expect(tooMuch).toMatchObject({ allowed: false, remaining: 2, reason: 'limited' });
        expect(tooMuch.retryAfterMs).toBeGreaterThan(0);
        expect(await limiter.consume('k', { cost: 2 })).toMatchObject({ allowed: true, remaining: 0 });
      });

      test('cost 0 and peek look without taking', async () => {
        const limiter = make();
        await limiter.consume('k', { cost: 2 });
        const a = await limiter.peek('k');
        const b = await limiter.consume('k', { cost: 0 });
        expect(a).toMatchObject({ allowed: true, remaining: 3, retryAfterMs: 0 });
        expect(b).toMatchObject({ allowed: true, remaining: 3 });
        expect((await drain(limiter, 'k', 3)).every((d) => d.allowed)).toBe(true);
        expect(await limiter.peek('fresh')).toMatchObject({ allowed: true, remaining: CAPACITY, resetMs: 0 });
      });

      test('a cost larger than the limit can never pass: finite numbers, no retry, nothing taken', async () => {
        const limiter = make();
        const d = await limiter.consume('k', { cost: CAPACITY + 1 });
        expect(d).toMatchObject({
          allowed: false,
          reason: 'cost-exceeds-capacity',
          retryAfterMs: 0,
          remaining: CAPACITY,
        });
        expect((await drain(limiter, 'k', CAPACITY)).every((x) => x.allowed)).toBe(true);
      });

      test('keys and prefixes are isolated', async () => {
        const limiter = make();
        const other = make();
        await drain(limiter, 'a', CAPACITY);
        expect((await limiter.consume('a')).allowed).toBe(false);
        expect(await limiter.consume('b')).toMatchObject({ allowed: true, remaining: CAPACITY - 1 });
        expect(await other.consume('a')).toMatchObject({ allowed: true, remaining: CAPACITY - 1 });
      });

      test('reset forgets the key', async () => {
        const limiter = make();
        await drain(limiter, 'k', CAPACITY);
        await limiter.reset('k');
        expect(await limiter.consume('k')).toMatchObject({ allowed: true, remaining: CAPACITY - 1 });
      });

      test('any key text is a key of its own', async () => {
        // Per minute: a key's expiry in Redis runs on the server's clock, and the 78 calls below
        // can take more than a second on a busy machine.
        const limiter = make({ rate: '5/1m' });
        const keys = [
          '',
          ' ',
          '{',
          '}',
          '{a}',
          'a:b',
          'a}:{b',
          '\r\n',
          '\u0000',
          'ключ',
          '🔥',
          '__proto__',
          'x'.repeat(10_000),
        ];
        for (const key of keys) await drain(limiter, key, CAPACITY);
        for (const key of keys) expect((await limiter.consume(key)).allowed).toBe(false);
        expect((await limiter.consume('a')).allowed).toBe(true);
      });

      test('every number in a decision is a finite integer >= 0', async () => {
        const limiter = make();
        const decisions: Decision[] = [];
        for (let i = 0; i < 40; i++) {
          clock.advance((i * 7919) % 300);
          decisions.push(await limiter.consume('k', { cost: i % 4 }));
        }
        for (const d of decisions) {
          for (const field of ['limit', 'remaining', 'resetMs', 'retryAfterMs', 'delayMs'] as const) {
            expect(Number.isInteger(d[field]) && d[field] >= 0).toBe(true);
          }
        }
        expect(decisions.some((d) => d.allowed) && decisions.some((d) => !d.allowed)).toBe(true);
      });
    });
  });
}
