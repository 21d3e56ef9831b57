import calculateSlot from 'cluster-key-slot';
import type { Cluster } from 'ioredis';
import { createConcurrencyLimiter, createLimiter, RedisStore } from '../../src';
import { escapeKeyText } from '../../src/stores/redis/redis-keys';
import type { RedisProcess } from '../harness/redis-server';
import { useRedisCluster } from '../harness/redis-fixtures';
import { ALL_CLIENT_KINDS, openClusterClient, type OpenClient } from '../harness/store-clients';

/**
 * One Redis Cluster master gone silent (SIGSTOP: its socket stays open and answers nothing)
 * fails only the keys it holds. The guard keeps a circuit per master, so the other masters'
 * keys are still decided by Redis while the silent one's circuit is open; one circuit per
 * limiter refused every key (`fail-closed`: 300 of 300 for 2.4 s, while 2/3 of the keys were
 * still served). Each test freezes a master for well under the cluster's node timeout (5 s), so
 * the cluster itself never marks it failed; the master is woken in `finally`.
 */
const redis = useRedisCluster();
let reader: Cluster;
let nodes: readonly RedisProcess[];

beforeAll(async () => {
  reader = await redis.client();
  nodes = redis.cluster().nodes;
});

const KEYS = Array.from({ length: 60 }, (_, i) => `user:${i}`);
const TIMEOUT_MS = 100;

/** The `host:port` of the master holding a user key's slot (sluice's keys hash by the escaped key). */
const ownerOf = (key: string): string => reader.slots[calculateSlot(escapeKeyText(key))]?.[0] as string;

/** Runs `body` with one master stopped (SIGSTOP), and wakes it whatever happens. */
async function withFrozen(node: RedisProcess, body: () => Promise<void>): Promise<void> {
  process.kill(node.pid, 'SIGSTOP');
  try {
    await body();
  } finally {
    process.kill(node.pid, 'SIGCONT');
  }
}

describe.each(ALL_CLIENT_KINDS)('Cluster on a %s client, one master silent', (kind) => {
  let open: OpenClient;
  let store: RedisStore;
  beforeAll(async () => {
    open = await openClusterClient(kind, nodes);
    store = new RedisStore({ client: open.client });
  });
  afterAll(() => open.close());

  /** The keys of the frozen master, and the others. */
  const split = (frozen: RedisProcess): { silent: Set<string>; live: string[] } => {
    const address = `${frozen.host}:${frozen.port}`;
    const silent = new Set(KEYS.filter((key) => ownerOf(key) === address));
    return { silent, live: KEYS.filter((key) => !silent.has(key)) };
  };

  test('rate limits: the other masters keep deciding their keys; the silent one costs timeouts only until its circuit opens', async () => {
    const limiter = createLimiter({
      rate: '1000/1h',
      store,
      prefix: `down-${kind}`,
      onStoreError: 'fail-closed',
      timeoutMs: TIMEOUT_MS,
    });
    const warm = await Promise.all(KEYS.map((key) => limiter.consume(key)));
    expect(warm.filter((d) => d.allowed && d.degraded === undefined)).toHaveLength(KEYS.length);

    const frozen = nodes[1] as RedisProcess;
    const { silent, live } = split(frozen);
    expect(silent.size).toBeGreaterThan(5);
    expect(live.length).toBeGreaterThan(20);
    const errors: string[] = [];
    limiter.on('storeError', ({ key }) => errors.push(key));

    await withFrozen(frozen, async () => {
      for (let round = 0; round < 3; round++) {
        const decisions = await Promise.all(KEYS.map((key) => limiter.consume(key)));
        const ofLive = decisions.filter((d) => !silent.has(d.key));
        const ofSilent = decisions.filter((d) => silent.has(d.key));
        // Decided by Redis: admitted, remaining counted down, not degraded.
        expect(ofLive.map((d) => [d.key, d.allowed, d.degraded, d.remaining])).toEqual(
          live.map((key) => [key, true, undefined, 1000 - 2 - round]),
        );
        expect(ofSilent.map((d) => [d.allowed, d.degraded, d.reason])).toEqual(
          [...silent].map(() => [false, 'fail-closed', 'store-unavailable']),
        );
      }
    });
    // Round 1 timed out on each silent key; rounds 2 and 3 found its circuit open (a probe at most).
    expect(errors.every((key) => silent.has(key))).toBe(true);
    expect(errors.length).toBeLessThanOrEqual(silent.size + 2);
  });

  test('concurrency limits: the same, and the permits taken on live masters are given back', async () => {
    const limiter = createConcurrencyLimiter({
      max: 1000,
      store,
      prefix: `down-conc-${kind}`,
      onStoreError: 'fail-closed',
      timeoutMs: TIMEOUT_MS,
    });
    const warm = await Promise.all(KEYS.map((key) => limiter.acquire(key)));
    expect(warm.filter((d) => d.allowed && d.degraded === undefined)).toHaveLength(KEYS.length);
    await Promise.all(warm.map((d) => d.permit?.release()));

    const frozen = nodes[2] as RedisProcess;
    const { silent, live } = split(frozen);
    expect(silent.size).toBeGreaterThan(5);

    await withFrozen(frozen, async () => {
      for (let round = 0; round < 3; round++) {
        const decisions = await Promise.all(KEYS.map((key) => limiter.acquire(key)));
        const ofLive = decisions.filter((d) => !silent.has(d.key));
        const ofSilent = decisions.filter((d) => silent.has(d.key));
        expect(ofLive.map((d) => [d.key, d.allowed, d.degraded, d.inFlight])).toEqual(
          live.map((key) => [key, true, undefined, 1]),
        );
        expect(ofSilent.map((d) => [d.allowed, d.degraded, d.reason])).toEqual(
          [...silent].map(() => [false, 'fail-closed', 'store-unavailable']),
        );
        await Promise.all(ofLive.map((d) => d.permit?.release()));
      }
      const counts = await Promise.all(live.map((key) => limiter.inFlight(key)));
      expect(counts).toEqual(live.map(() => 0));
    });
  });
});
