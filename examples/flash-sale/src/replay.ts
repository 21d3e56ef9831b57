import type { AddressInfo } from 'node:net';
import { RedisStore } from '@sluice/core';
import Redis from 'ioredis';
import { createShop, type ShopOptions } from './shop';
import { HOT_SKU, SECKILL_STOCK } from './seckill';

/** One simulated request of the sale. */
interface Shot {
  readonly atMs: number;
  readonly sku: string;
  readonly user: string;
  readonly ip: string;
}

/** Counts of one replay, per SKU. */
export type ReplayCounts = Record<string, { placed: number; busy: number; refused: number }>;

/**
 * A flash-sale burst, deterministic: `seconds` of traffic at `perSecond`, 80 % on the hot SKU;
 * 400 users on 100 addresses, two of which are bots sending a third of all requests.
 */
export function sale(seconds = 10, perSecond = 300): Shot[] {
  let seed = 42;
  const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  const skus = Object.keys(SECKILL_STOCK).filter((sku) => sku !== HOT_SKU);
  return Array.from({ length: seconds * perSecond }, (_, i) => {
    const bot = random() < 1 / 3;
    return {
      atMs: Math.floor((i * 1000) / perSecond),
      sku: random() < 0.8 ? HOT_SKU : (skus[Math.floor(random() * skus.length)] as string),
      user: bot ? `bot-${i % 2}` : `user-${Math.floor(random() * 400)}`,
      ip: bot ? `203.0.113.${i % 2}` : `198.51.100.${Math.floor(random() * 100)}`,
    };
  });
}

/**
 * Replays the sale against the shop over loopback HTTP, its clock driven by the replay (so ten
 * seconds of sale take a moment), and counts placed orders, "busy" pages and refusals per SKU.
 * With a `store` (a `RedisStore`), the shop's limits live there: the counts are the same;
 * `timeoutMs` is each limit's wait for it (see `ShopOptions`).
 */
export async function replay(
  shots: readonly Shot[] = sale(),
  { store, timeoutMs }: Pick<ShopOptions, 'store' | 'timeoutMs'> = {},
): Promise<ReplayCounts> {
  let now = Date.UTC(2026, 10, 11);
  const opening = now;
  const app = createShop({ store, clock: () => now, timeoutMs });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const counts: ReplayCounts = {};
  try {
    for (const shot of shots) {
      now = opening + shot.atMs;
      const response = await fetch(`${base}/seckill/${shot.sku}`, {
        method: 'POST',
        headers: { 'user-id': shot.user, 'x-forwarded-for': shot.ip, accept: 'application/json' },
      });
      const body = (await response.json()) as { order?: string };
      const row = (counts[shot.sku] ??= { placed: 0, busy: 0, refused: 0 });
      if (response.status === 200 && body.order === 'placed') row.placed++;
      else if (response.status === 200 && body.order === 'busy') row.busy++;
      else row.refused++;
    }
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  return counts;
}

/** Requests in flight at once when driving a running shop. */
const IN_FLIGHT = 64;

/**
 * Sends the sale to a shop already running at `baseUrl` (`pnpm start`), at the sale's own pace
 * in real time, so its dashboard shows the sale as it happens; counts the replies as
 * {@link replay} does.
 */
export async function drive(baseUrl: string, shots: readonly Shot[] = sale()): Promise<ReplayCounts> {
  const counts: ReplayCounts = {};
  const started = Date.now();
  const inFlight = new Set<Promise<void>>();
  for (const shot of shots) {
    const wait = started + shot.atMs - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    if (inFlight.size >= IN_FLIGHT) await Promise.race(inFlight);
    const sent: Promise<void> = fetch(new URL(`/seckill/${shot.sku}`, baseUrl), {
      method: 'POST',
      headers: { 'user-id': shot.user, 'x-forwarded-for': shot.ip, accept: 'application/json' },
    })
      .then(
        async (response) => {
          const body = (await response.json().catch(() => ({}))) as { order?: string };
          const row = (counts[shot.sku] ??= { placed: 0, busy: 0, refused: 0 });
          if (response.status === 200 && body.order === 'placed') row.placed++;
          else if (response.status === 200 && body.order === 'busy') row.busy++;
          else row.refused++;
        },
        () => {
          (counts[shot.sku] ??= { placed: 0, busy: 0, refused: 0 }).refused++;
        },
      )
      .finally(() => inFlight.delete(sent));
    inFlight.add(sent);
  }
  await Promise.all(inFlight);
  return counts;
}

async function main(): Promise<void> {
  // `replay <url> [seconds]`: drive the running demo (watch its dashboard); without a URL, replay
  // against a shop of its own on a driven clock.
  const target = process.argv.slice(2).find((arg) => /^https?:\/\//.test(arg));
  const seconds = Number(process.argv.slice(2).find((arg) => /^\d+$/.test(arg)) ?? 10);
  if (target !== undefined) {
    const shots = sale(seconds);
    console.log(
      `driving the shop at ${target}: ${shots.length} requests over ${seconds} s, 80 % on ${HOT_SKU}\n`,
    );
    print(await drive(target, shots));
    return;
  }
  const shots = sale();
  const url = process.env.REDIS_URL;
  const client = url === undefined || url === '' ? undefined : new Redis(url, { maxRetriesPerRequest: 1 });
  // Each replay in a namespace of its own: the sale's clock starts at the same instant every time.
  const store = client && new RedisStore({ client, prefix: `replay-${Date.now()}` });
  console.log(
    `replaying a flash sale: ${shots.length} requests over 10 s, 80 % on ${HOT_SKU}, a third from two bots, ` +
      `limits in ${client === undefined ? 'memory' : `Redis at ${url}`}\n`,
  );
  print(await replay(shots, { store }).finally(() => client?.quit()));
}

function print(counts: ReplayCounts): void {
  console.log('sku              placed   busy (degraded 200)   refused (429)');
  for (const [sku, row] of Object.entries(counts)) {
    console.log(
      `${sku.padEnd(16)} ${String(row.placed).padStart(6)}   ${String(row.busy).padStart(19)}   ${String(row.refused).padStart(13)}`,
    );
  }
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
