import {
  createConcurrencyLimiter,
  createLimiter,
  MemoryStore,
  RedisStore,
  type Decision,
  type LimiterInfo,
  type LimiterMetrics,
  type MetricsSink,
} from '../../src';
import { createHttpLimiter } from '../../src/adapter';
import { errorOf } from '../contract/config-error-of';
import { fakeClock } from '../contract/fake-clock';
import { useRedisServer } from '../harness/redis-fixtures';
import { FlakyStore } from '../resilience/flaky-store';

/** A sink that writes down everything it is told, per limiter. */
function recordingSink() {
  const limiters: Array<{ info: LimiterInfo; events: string[] }> = [];
  const sink: MetricsSink = {
    limiter(info) {
      const events: string[] = [];
      limiters.push({ info, events });
      const recorder: LimiterMetrics = {
        decided: (d: Decision) =>
          events.push(
            `${d.allowed ? (d.delayMs > 0 ? 'delayed' : 'admitted') : 'limited'} ${d.key}${d.degraded ? ` ${d.degraded}` : ''}`,
          ),
        storeCall: (seconds) => events.push(`call ${seconds >= 0 && seconds < 5 ? 'ok' : seconds}`),
        storeError: (kind) => events.push(`error ${kind}`),
        storeUp: (up) => events.push(up ? 'up' : 'down'),
        blockCacheHit: () => events.push('block-cache'),
        leaseCall: () => events.push('lease'),
      };
      return recorder;
    },
  };
  return { sink, limiters };
}

describe('limiter metrics (the `metrics` and `name` options)', () => {
  test('consume and consumeSync report each decision; peek and cost 0 do not', async () => {
    const { sink, limiters } = recordingSink();
    const limiter = createLimiter({ rate: '2/1m', metrics: sink, name: 'per-user', clock: fakeClock() });
    expect(limiters.map((l) => l.info)).toEqual([
      { name: 'per-user', store: 'memory', remote: false, dryRun: false },
    ]);
    await limiter.consume('a');
    limiter.consumeSync('a');
    await limiter.peek('a');
    await limiter.consume('a', { cost: 0 });
    await limiter.consume('a');
    expect(limiters[0]?.events).toEqual(['admitted a', 'admitted a', 'limited a']);
  });

  test('several rules and overrides report through the same path; delays are reported as delayed', async () => {
    const { sink, limiters } = recordingSink();
    const clock = fakeClock();
    const rules = createLimiter({ rate: ['1r/s', '10/1m'], metrics: sink, clock });
    await rules.consume('k');
    await rules.consume('k');
    const queued = createLimiter({
      rate: '1r/s',
      queue: { maxWaitMs: 5000 },
      overrides: { vip: '2r/s' },
      metrics: sink,
      clock,
    });
    await queued.consume('vip');
    await queued.consume('vip');
    expect(limiters.map((l) => l.events)).toEqual([
      ['admitted k', 'limited k'],
      ['admitted vip', 'delayed vip'],
    ]);
    // Without `name`, the prefix names the limiter.
    expect(limiters[0]?.info.name).toBe('sluice');
  });

  test('a remote store reports calls, errors, the circuit opening and closing', async () => {
    const { sink, limiters } = recordingSink();
    const store = new FlakyStore();
    const clock = fakeClock();
    const limiter = createLimiter({
      rate: '10r/s',
      store,
      metrics: sink,
      name: 'flaky',
      clock,
      timeoutMs: 20,
    });
    expect(limiters[0]?.info).toEqual({ name: 'flaky', store: 'custom', remote: true, dryRun: false });
    const events = limiters[0]?.events as string[];
    await limiter.consume('k');
    expect(events).toEqual(['call ok', 'admitted k']);
    events.length = 0;
    store.mode = 'throw';
    for (let i = 0; i < 3; i++) await limiter.consume(`k${i}`);
    expect(events).toEqual([
      'call ok',
      'error error',
      'admitted k0 insurance',
      'call ok',
      'error error',
      'admitted k1 insurance',
      'call ok',
      'error error',
      'down', // the third failure in a row opens the circuit
      'admitted k2 insurance',
    ]);
    events.length = 0;
    await limiter.consume('k3'); // the circuit is open: no call
    store.mode = 'hang';
    clock.advance(1000);
    await limiter.consume('k4'); // the probe times out
    expect(events).toEqual([
      'admitted k3 insurance',
      'call ok',
      'error timeout',
      // Still down: told once per outage, not again at each failed probe.
      'admitted k4 insurance',
    ]);
    events.length = 0;
    store.mode = 'ok';
    clock.advance(1000);
    await limiter.consume('k');
    expect(events).toEqual(['call ok', 'up', 'admitted k']);
  });

  describe('on Redis', () => {
    const redis = useRedisServer();

    test('block-cache hits and lease calls are reported, with the decisions they made', async () => {
      const { sink, limiters } = recordingSink();
      const clock = fakeClock();
      const store = new RedisStore({ client: redis.client() });
      // A generous timeout: a busy machine must not turn the first call into an insurance decision.
      const blocked = createLimiter({
        rate: '1/1m',
        store,
        prefix: 'm-block',
        metrics: sink,
        clock,
        timeoutMs: 5000,
      });
      await blocked.consume('k');
      await blocked.consume('k');
      await blocked.consume('k'); // refused locally
      expect(limiters[0]?.info).toEqual({ name: 'm-block', store: 'redis', remote: true, dryRun: false });
      expect(limiters[0]?.events).toEqual([
        'call ok',
        'admitted k',
        'call ok',
        'limited k',
        'block-cache',
        'limited k',
      ]);
      const leased = createLimiter({
        rate: '10/1m',
        store,
        prefix: 'm-lease',
        lease: { size: 5 },
        metrics: sink,
        clock,
        timeoutMs: 5000,
      });
      for (let i = 0; i < 6; i++) await leased.consume('k');
      expect(limiters[1]?.events.filter((e) => e === 'lease')).toHaveLength(2);
      expect(limiters[1]?.events.filter((e) => e === 'admitted k')).toHaveLength(6);
    });
  });

  test('the HTTP layer tells a dry-run limit’s metrics it is in dry run', async () => {
    const { sink, limiters } = recordingSink();
    const http = createHttpLimiter({ rate: '1/1m', dryRun: true, metrics: sink, name: 'dry', key: 'all' });
    const request = { remoteAddress: '127.0.0.1', url: '/', headers: {} };
    await http.decide({}, request);
    await http.decide({}, request);
    expect(limiters[0]?.info).toEqual({ name: 'dry', store: 'memory', remote: false, dryRun: true });
    expect(limiters[0]?.events).toEqual(['admitted all', 'limited all']);
  });

  test('bad `name` or `metrics` fail at creation, naming the option', () => {
    for (const name of ['', 'caf\u00e9', 'tab\there', 'x'.repeat(129), 42]) {
      expect(errorOf(() => createLimiter({ rate: '1r/s', name: name as string })).option).toBe('name');
    }
    for (const metrics of [{}, 'prometheus', { limiter: 1 }, null]) {
      const error = errorOf(() =>
        createLimiter({ rate: '1r/s', metrics: metrics as unknown as MetricsSink }),
      );
      expect(error.option).toBe('metrics');
    }
    expect(errorOf(() => createHttpLimiter({ rate: '1r/s', name: '\u{1F600}' })).option).toBe('name');
    // A default name from an exotic prefix is escaped, not refused.
    const { sink, limiters } = recordingSink();
    createLimiter({ rate: '1r/s', prefix: 'zone-\u00e9', metrics: sink, store: new MemoryStore() });
    expect(limiters[0]?.info.name).toBe('zone-\\u00e9');
  });

  test('a limiter whose creation fails on a later option never reaches the sink', () => {
    const { sink, limiters } = recordingSink();
    const bad: Array<[object, string]> = [
      [{ onStoreError: 'sometimes' }, 'onStoreError'],
      [{ blockCache: { maxKeys: 0 } }, 'blockCache.maxKeys'],
      [{ overrides: 42 }, 'overrides'],
      [{ lease: { size: 5 } }, 'lease'], // a remote store's option, on the memory store
    ];
    for (const [options, option] of bad) {
      const error = errorOf(() =>
        createLimiter({ rate: '10/1s', name: 'doomed', metrics: sink, ...options }),
      );
      expect(error.option).toBe(option);
    }
    expect(
      errorOf(() =>
        createConcurrencyLimiter({ max: 1, name: 'doomed', metrics: sink, queue: { maxWaitMs: -1 } }),
      ).option,
    ).toBe('queue.maxWaitMs');
    expect(limiters).toEqual([]);
    // The same options without the bad one register once.
    createLimiter({ rate: '1r/s', name: 'kept', metrics: sink });
    createConcurrencyLimiter({ max: 1, name: 'kept-too', metrics: sink });
    expect(limiters.map(({ info }) => info.name)).toEqual(['kept', 'kept-too']);
  });
});
