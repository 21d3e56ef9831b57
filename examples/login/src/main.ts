import { RedisStore } from '@sluice/core';
import Redis from 'ioredis';
import { createApp } from './app';

const port = Number(process.env.PORT ?? 3002);
const redis = process.env.REDIS_URL === undefined ? undefined : new Redis(process.env.REDIS_URL);
const app = createApp({
  store: redis === undefined ? undefined : new RedisStore({ client: redis }),
  trustProxy: process.env.TRUST_PROXY ?? false, // 'loopback', '10.0.0.0/8', … behind a reverse proxy
});

const server = app.listen(port, () => {
  const url = `http://localhost:${port}/login`;
  const post = (password: string) =>
    `curl -s -w ' %{http_code}\\n' -H 'content-type: application/json' -d '{"username":"ann","password":"${password}"}' ${url}`;
  console.log(`sluice login example on ${url} (limits in ${redis === undefined ? 'memory' : 'Redis'})`);
  console.log(`  a success, as often as you like:   ${post('correct horse')}`);
  console.log(`  a wrong password (the 6th is 429):  for i in 1 2 3 4 5 6; do ${post('guess')}; done`);
});
process.on('SIGINT', () => {
  server.close(() => {
    redis?.disconnect();
    process.exit(0);
  });
});
