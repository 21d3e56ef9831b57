/**
 * Instructions of redis-server per lone decision (1 in flight), counted with callgrind: sluice's
 * six algorithms (admitted and limited) beside rate-limiter-flexible's RateLimiterRedis. Counted
 * are the functions that read, run and reply a command (`readQueryFromClient`) and write the
 * reply (`beforeSleep`), so the server's idle cron does not blur the figures.
 *
 *   npx tsx bench/src/redis/lone-instructions.ts              (env LONE_N: decisions per case)
 *   LONE_ONLY=gcra,rlf npx tsx ...     (the dumps stay in a temporary folder, for callgrind_annotate)
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ALGORITHMS, createLimiter, RedisStore, type AlgorithmName } from '@sluice/core';
import Redis from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { freePort } from './redis-server';

const N = Number(process.env.LONE_N ?? 400);
const ONLY = process.env.LONE_ONLY?.split(',');
const KEYS = Array.from({ length: 200 }, (_, i) => `user:${i}`);

type Decide = (key: string) => Promise<boolean>;

interface Case {
  readonly name: string;
  readonly decide: Decide;
  /** One key for every decision (a limited key), or the 200 keys in turn. */
  readonly key?: string;
}

function sluiceCases(client: Redis, algorithm: AlgorithmName): Case[] {
  const store = new RedisStore({ client });
  const rate =
    algorithm === 'sliding-log' ? { limit: 1000, window: '1s' } : { limit: 100_000_000, window: 60_000 };
  const admitted = createLimiter({ algorithm, rate, store, prefix: `a-${algorithm}`, timeoutMs: 60_000 });
  const limited = createLimiter({
    algorithm,
    rate: '1r/m',
    store,
    prefix: `l-${algorithm}`,
    timeoutMs: 60_000,
    blockCache: false,
  });
  return [
    { name: `${algorithm} admitted`, decide: (key) => admitted.consume(key).then((d) => d.allowed) },
    {
      name: `${algorithm} limited`,
      decide: (key) => limited.consume(key).then((d) => d.allowed),
      key: 'flooded',
    },
  ];
}

function rlfCases(client: Redis): Case[] {
  const decide =
    (limiter: RateLimiterRedis): Decide =>
    (key) =>
      limiter.consume(key).then(
        () => true,
        (rejection: unknown) => {
          if (rejection instanceof RateLimiterRes) return false;
          throw rejection;
        },
      );
  const admitted = new RateLimiterRedis({
    storeClient: client,
    points: 100_000_000,
    duration: 60,
    keyPrefix: 'rlf',
  });
  const limited = new RateLimiterRedis({ storeClient: client, points: 1, duration: 60, keyPrefix: 'rlf-l' });
  return [
    { name: 'rlf admitted', decide: decide(admitted) },
    { name: 'rlf limited', decide: decide(limited), key: 'flooded' },
  ];
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'lone-cg-'));
  const port = await freePort();
  const server = spawn(
    'valgrind',
    [
      '--tool=callgrind',
      `--callgrind-out-file=${join(dir, 'cg.out')}`,
      '--collect-atstart=no',
      '--toggle-collect=readQueryFromClient',
      '--toggle-collect=beforeSleep',
      'redis-server',
      '--port',
      String(port),
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
    ],
    { stdio: 'ignore' },
  );
  const pid = server.pid as number;
  const client = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => 200 });
  client.on('error', () => {}); // refused until valgrind's redis-server listens
  try {
    for (let i = 0; ; i++) {
      try {
        await client.connect();
        await client.ping();
        break;
      } catch {
        if (i > 100) throw new Error('redis-server under valgrind did not start');
        client.disconnect();
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
    const cases = [
      ...ALGORITHMS.flatMap((algorithm) => sluiceCases(client, algorithm)),
      ...rlfCases(client),
    ].filter((c) => ONLY === undefined || ONLY.some((o) => c.name.startsWith(o)));
    const rows: string[] = [];
    const keyOf = (c: Case, i: number): string => c.key ?? (KEYS[i % KEYS.length] as string);
    // Every case's script loaded before any is counted: Lua's garbage collector, which Redis
    // steps every 50 calls, works through every loaded script, so each case sees the same heap.
    // Every key written once (and the limited key over its limit).
    for (const c of cases) for (let i = 0; i < KEYS.length; i++) await c.decide(keyOf(c, i));
    for (const c of cases) {
      execFileSync('callgrind_control', ['--zero', String(pid)], { stdio: 'ignore' });
      let admitted = 0;
      for (let i = 0; i < N; i++) if (await c.decide(keyOf(c, i))) admitted++;
      const label = c.name.replace(/ /g, '-');
      execFileSync('callgrind_control', [`--dump=${label}`, String(pid)], { stdio: 'ignore' });
      const file = readdirSync(dir)
        .filter((f) => f.startsWith('cg.out'))
        .map((f) => join(dir, f))
        .find((f) => readFileSync(f, 'utf8').includes(`desc: Trigger: dump ${label}\n`));
      const text = readFileSync(file as string, 'utf8');
      const total = Number(/^(?:summary|totals): (\d+)/m.exec(text)?.[1]);
      rows.push(
        `${c.name.padEnd(26)} ${(total / N / 1000).toFixed(1).padStart(7)} k  admitted ${admitted}/${N}  ${file}`,
      );
      console.log(rows[rows.length - 1]);
    }
  } finally {
    client.disconnect();
    process.kill(pid, 'SIGTERM');
  }
}

void main();
