import { start } from './server';

// `pnpm start` at the repository root builds the packages, then runs this file.
async function main(): Promise<void> {
  const port = process.env.PORT === undefined ? undefined : Number(process.env.PORT);
  const shop = await start({ port, redisUrl: process.env.REDIS_URL, opsToken: process.env.OPS_TOKEN });
  console.log(`sluice flash-sale demo on ${shop.url} (limits in ${shop.storeName})\n`);
  console.log('Try, in another terminal:\n');
  console.log(`  # admitted: a live product page\n  ${shop.curls[0]}\n`);
  console.log(
    `  # degraded: 6 requests a minute per SKU, then the cached page (still a 200)\n  ${shop.curls[1]}\n`,
  );
  console.log(
    `  # limited: 2 requests a minute per user-id, then 429 with Retry-After\n  ${shop.curls[2]}\n`,
  );
  console.log(
    `Watch it: the dashboard at ${shop.dashboardUrl} (live), Prometheus metrics at ${shop.metricsUrl}` +
      (process.env.OPS_TOKEN
        ? ' (both ask for OPS_TOKEN)'
        : ' (both for this machine only: set OPS_TOKEN to open them to others)'),
  );
  console.log(
    `  # a flash sale, live on the dashboard: 3 000 orders over 10 s\n  pnpm --filter @sluice/example-flash-sale replay ${shop.url}\n`,
  );
  console.log('Ctrl-C stops it.');

  let stopping = false;
  const stop = (): void => {
    if (stopping) process.exit(1); // a second Ctrl-C does not wait
    stopping = true;
    console.log('\nstopping...');
    shop.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
