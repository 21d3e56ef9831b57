import { ALGORITHMS, consumeAll, RedisStore as SluiceRedisStore, type AlgorithmName } from '@sluice/core';
import type { Options as ErlOptions } from 'express-rate-limit';
import Redis from 'ioredis';
import { RedisStore as RateLimitRedisStore, type RedisReply } from 'rate-limit-redis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { countedLimiter, type CountedLimiter } from '../sluice-limiter';
import { ADMIT_ALL, LOG_LIMIT, LOG_WINDOW_MS, WIDE_LOG_LIMIT, WINDOW_MS } from '../limits';
import { countWhenCandidate } from './count-when';

/** One decision: resolves whether it was admitted. */
export type Decide = (key: string) => Promise<boolean>;

/**
 * One candidate of the Redis section (see `redis.ts`), on a client of its own: it decides with a
 * limit never reached and, where it has one, a limit of 1 per minute.
 */
export interface Candidate {
  readonly id: string;
  readonly name: string;
  readonly client: Redis;
  /** Decides with a limit never reached (`admitted`) or of 1 per minute (`limited`). */
  readonly admitted: Decide;
  readonly limited?: Decide;
  /** Decisions made without the store (sluice only). */
  withoutStore(): number;
}

/** A client of its own on the bench's Redis. */
export function connect(port: number): Redis {
  return new Redis({ host: '127.0.0.1', port });
}

/**
 * sluice on `algorithm`, batching on or off; the sliding log at {@link LOG_LIMIT} per
 * {@link LOG_WINDOW_MS}, or at `logLimit` (then the candidate's id ends with it).
 */
function sluice(port: number, algorithm: AlgorithmName, batch = true, logLimit?: number): Candidate {
  const client = connect(port);
  const store = new SluiceRedisStore({ client, batch });
  const log = algorithm === 'sliding-log' ? (logLimit ?? LOG_LIMIT) : undefined;
  const rate =
    log === undefined ? { limit: ADMIT_ALL, window: WINDOW_MS } : { limit: log, window: LOG_WINDOW_MS };
  const tag = `${batch ? algorithm : `${algorithm}-unbatched`}${logLimit === undefined ? '' : `-${logLimit}`}`;
  const admitted = countedLimiter({ algorithm, rate, store, prefix: `bench-${tag}` }, { shared: true });
  const limited = countedLimiter(
    { algorithm, rate: '1r/m', store, prefix: `bench-flood-${tag}` },
    { shared: true },
  );
  const name =
    log === undefined ? `sluice ${algorithm}` : `sluice sliding-log (${log}/${LOG_WINDOW_MS / 1000}s)`;
  const id = `sluice:${algorithm}${batch ? '' : ':unbatched'}${logLimit === undefined ? '' : `:${logLimit}`}`;
  return {
    id,
    name: batch ? name : `${name}, batch: false`,
    client,
    admitted: (key) => admitted.limiter.consume(key).then((d) => d.allowed),
    limited: (key) => limited.limiter.consume(key).then((d) => d.allowed),
    withoutStore: () => admitted.withoutStore() + limited.withoutStore(),
  };
}

function rlfDecide(limiter: RateLimiterRedis): Decide {
  return (key) =>
    limiter.consume(key).then(
      () => true,
      (rejection: unknown) => {
        if (rejection instanceof RateLimiterRes) return false;
        throw rejection;
      },
    );
}

/** Every candidate of the Redis section: a bare INCR, sluice, the two-limit pair and the peers. */
export function candidates(port: number): Candidate[] {
  const incr = connect(port);
  const rlfClient = connect(port);
  const rlrClient = connect(port);
  const rlrStore = (limit: number, prefix: string): Decide => {
    const store = new RateLimitRedisStore({
      sendCommand: (command: string, ...args: string[]) =>
        rlrClient.call(command, ...args) as Promise<RedisReply>,
      prefix,
    });
    store.init({ windowMs: WINDOW_MS } as ErlOptions);
    // The store counts; express-rate-limit compares with the limit.
    return (key) => store.increment(key).then((info) => info.totalHits <= limit);
  };
  return [
    {
      id: 'incr',
      name: 'bare INCR (ceiling)',
      client: incr,
      admitted: (key) => incr.incr(`bench-incr:${key}`).then(() => true),
      withoutStore: () => 0,
    },
    ...ALGORITHMS.map((algorithm) => sluice(port, algorithm)),
    sluice(port, 'sliding-log', true, WIDE_LOG_LIMIT),
    sluice(port, 'gcra', false),
    ...twoLimits(port),
    countWhenCandidate(port, connect),
    {
      id: 'rate-limiter-flexible',
      name: 'rate-limiter-flexible RateLimiterRedis',
      client: rlfClient,
      admitted: rlfDecide(
        new RateLimiterRedis({
          storeClient: rlfClient,
          points: ADMIT_ALL,
          duration: WINDOW_MS / 1000,
          keyPrefix: 'bench-rlf',
        }),
      ),
      limited: rlfDecide(
        new RateLimiterRedis({
          storeClient: rlfClient,
          points: 1,
          duration: WINDOW_MS / 1000,
          keyPrefix: 'bench-rlf-flood',
        }),
      ),
      withoutStore: () => 0,
    },
    {
      id: 'rate-limit-redis',
      name: 'rate-limit-redis (express-rate-limit store)',
      client: rlrClient,
      admitted: rlrStore(ADMIT_ALL, 'bench-rlr:'),
      limited: rlrStore(1, 'bench-rlr-flood:'),
      withoutStore: () => 0,
    },
  ];
}

/** SKUs the two-limit candidates' second limit counts per, in turn beside the addresses. */
export const SKUS = 100;

/**
 * A request under two limits, per address and per SKU ([perIp, perSku]), on one Redis node: sluice's
 * `consumeAll` (one script call, or one request of a batch call, for both) beside two
 * rate-limiter-flexible `RateLimiterRedis.consume` calls, one after the other, as its users check
 * two limits. A decision is a request's, both limits taken.
 */
function twoLimits(port: number): Candidate[] {
  const client = connect(port);
  const store = new SluiceRedisStore({ client });
  const rate = { limit: ADMIT_ALL, window: WINDOW_MS };
  const [perIp, perSku] = ['ip', 'sku'].map((name) =>
    countedLimiter({ rate, store, prefix: `bench-two-${name}` }, { shared: true }),
  ) as [CountedLimiter, CountedLimiter];
  const sku = (key: string): string => `sku:${Number(key.slice(key.indexOf(':') + 1)) % SKUS}`;
  const rlfClient = connect(port);
  const [rlfIp, rlfSku] = ['ip', 'sku'].map(
    (name) =>
      new RateLimiterRedis({
        storeClient: rlfClient,
        points: ADMIT_ALL,
        duration: WINDOW_MS / 1000,
        keyPrefix: `bench-rlf-two-${name}`,
      }),
  ) as [RateLimiterRedis, RateLimiterRedis];
  const [ipDecide, skuDecide] = [rlfDecide(rlfIp), rlfDecide(rlfSku)];
  return [
    {
      id: TWO_LIMITS.sluice,
      name: 'sluice consumeAll([perIp, perSku])',
      client,
      admitted: (key) =>
        consumeAll([
          { limiter: perIp.limiter, key },
          { limiter: perSku.limiter, key: sku(key) },
        ]).then((decisions) => decisions.every((d) => d?.allowed === true)),
      withoutStore: () => perIp.withoutStore() + perSku.withoutStore(),
    },
    {
      id: TWO_LIMITS.rlf,
      name: 'rate-limiter-flexible, two consume calls',
      client: rlfClient,
      admitted: async (key) => (await ipDecide(key)) && skuDecide(sku(key)),
      withoutStore: () => 0,
    },
  ];
}

/** The two-limit candidates' ids (see {@link twoLimits}). */
export const TWO_LIMITS = {
  sluice: 'two-limits:sluice',
  rlf: 'two-limits:rate-limiter-flexible',
} as const;
