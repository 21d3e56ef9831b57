'use strict';
/**
 * An app instance in a process of its own, holding concurrency permits on a shared Redis, driven
 * over IPC by permit-processes.test.ts. It loads the BUILT package, as an app server would.
 *
 * argv: <path to dist/index.cjs> <redis port> <prefix> <max> <leaseMs> <batch: 'on' or 'off'>
 * Messages in:  { type: 'acquire', key, count }: asks for `count` permits at once and holds those granted
 *               { type: 'release' }: releases every permit it holds
 * Messages out: { type: 'ready' }; { type: 'acquired', admitted, degraded }; { type: 'released' }
 */
const [distPath, port, prefix, max, leaseMs, batch] = process.argv.slice(2);
const Redis = require('ioredis');
const { createConcurrencyLimiter, RedisStore } = require(distPath);

const client = new Redis({ host: '127.0.0.1', port: Number(port) });
const limiter = createConcurrencyLimiter({
  max: Number(max),
  leaseMs: Number(leaseMs),
  prefix,
  store: new RedisStore({ client, batch: batch !== 'off' }),
  // Every decision from Redis (its TIME, too): a slow one must not fall back to a local count here.
  timeoutMs: 60_000,
  onStoreError: 'fail-closed',
});
const held = [];

client.once('ready', () => process.send({ type: 'ready' }));
// The test runner went away: never outlive it.
process.on('disconnect', () => process.exit(0));
process.on('message', async (message) => {
  if (message.type === 'acquire') {
    const decisions = await Promise.all(
      Array.from({ length: message.count }, () => limiter.acquire(message.key)),
    );
    for (const decision of decisions) if (decision.allowed) held.push(decision.permit);
    process.send({
      type: 'acquired',
      admitted: decisions.filter((d) => d.allowed).length,
      degraded: decisions.filter((d) => d.degraded !== undefined).length,
    });
  } else if (message.type === 'release') {
    await Promise.all(held.splice(0).map((permit) => permit.release()));
    process.send({ type: 'released' });
  }
});
