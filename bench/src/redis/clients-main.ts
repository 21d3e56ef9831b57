// `pnpm --filter @sluice/bench bench:clients`: only the node-redis vs ioredis row of the Redis
// section, on a redis-server of its own; prints the rows and writes no results file.
import { progress } from '../progress';
import { settingsFromEnv } from '../settings';
import { clientsTable } from '../report/markdown';
import { runClients } from './clients';
import { startRedis } from './redis-server';

async function main(): Promise<void> {
  const redis = await startRedis();
  progress('redis-server', `pid ${redis.pid}, port ${redis.port}`);
  try {
    const result = await runClients(settingsFromEnv(), redis.port);
    process.stdout.write(`${clientsTable(result).join('\n')}\n`);
  } finally {
    await redis.stop();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
