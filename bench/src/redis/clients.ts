import { RedisStore as SluiceRedisStore } from '@sluice/core';
import Redis from 'ioredis';
import { createClient } from 'redis';
import { ADMIT_ALL, WINDOW_MS } from '../limits';
import { median, round } from '../measure';
import { progress } from '../progress';
import type { Settings } from '../settings';
import { countedLimiter } from '../sluice-limiter';
import { throughput } from './redis';

/** One client's decisions/s at one concurrency, and its rate over ioredis's in the same rounds. */
export interface ClientRow {
  readonly client: 'ioredis' | 'node-redis';
  readonly inFlight: number;
  readonly perSecond: number;
  /** Median over the rounds of this rate / ioredis's in the same round. */
  readonly ofIoredis: number;
  readonly samples: readonly number[];
  readonly withoutStore: number;
}

export interface ClientsResult {
  readonly rows: readonly ClientRow[];
  readonly notes: readonly string[];
}

const IN_FLIGHT = [1, 256] as const;

/**
 * sluice gcra (batching on, the default) on an ioredis client and on a node-redis (`redis` 5)
 * client to the same server, interleaved rounds: issue 14's goal is node-redis within 10 % of
 * ioredis.
 */
export async function runClients(settings: Settings, port: number): Promise<ClientsResult> {
  const ioredis = new Redis({ host: '127.0.0.1', port });
  const nodeRedis = await createClient({ socket: { host: '127.0.0.1', port } }).connect();
  const limiterOn = (client: Redis | typeof nodeRedis, tag: string) =>
    countedLimiter(
      {
        algorithm: 'gcra',
        rate: { limit: ADMIT_ALL, window: WINDOW_MS },
        store: new SluiceRedisStore({ client }),
        prefix: `bench-client-${tag}`,
      },
      { shared: true },
    );
  const candidates = [
    { client: 'ioredis' as const, counted: limiterOn(ioredis, 'ioredis') },
    { client: 'node-redis' as const, counted: limiterOn(nodeRedis, 'node-redis') },
  ];
  const rows: ClientRow[] = [];
  try {
    for (const inFlight of IN_FLIGHT) {
      const samples = candidates.map((): number[] => []);
      const before = candidates.map((c) => c.counted.withoutStore());
      for (const { counted } of candidates) {
        await throughput(
          (key) => counted.limiter.consume(key).then((d) => d.allowed),
          inFlight,
          Math.min(200, settings.redisMs),
        );
      }
      for (let r = 0; r < settings.redisRounds; r++) {
        progress(
          'redis',
          'node-redis vs ioredis',
          `${inFlight} in flight`,
          `round ${r + 1}/${settings.redisRounds}`,
        );
        // Interleaved, the order alternating per round: neither client always runs on a warmer server.
        for (let i = 0; i < candidates.length; i++) {
          const at = (i + r) % candidates.length;
          const { limiter } = (candidates[at] as (typeof candidates)[number]).counted;
          samples[at]?.push(
            await throughput(
              (key) => limiter.consume(key).then((d) => d.allowed),
              inFlight,
              settings.redisMs,
            ),
          );
        }
      }
      const base = samples[0] ?? [];
      candidates.forEach((candidate, i) => {
        const mine = samples[i] ?? [];
        rows.push({
          client: candidate.client,
          inFlight,
          perSecond: Math.round(median(mine)),
          ofIoredis: round(median(mine.map((v, k) => v / (base[k] ?? Number.NaN))), 3),
          samples: mine.map(Math.round),
          withoutStore: candidate.counted.withoutStore() - (before[i] ?? 0),
        });
      });
    }
  } finally {
    ioredis.disconnect();
    nodeRedis.destroy();
  }
  return {
    rows,
    notes: [
      'sluice gcra, batching on, one connection per client, 10 000 keys in turn, every decision admits',
      'ioredis runs scripts through defineCommand, node-redis through sendCommand (EVALSHA), its replies handed on one client write at a time (node-redis writes in a setImmediate)',
      'a ratio measured with the cores crowded says little: there, node-redis taking turns with Redis costs less CPU than working at the same time (see clients-probe.ts)',
    ],
  };
}
