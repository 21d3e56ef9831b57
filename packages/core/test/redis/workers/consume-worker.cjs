'use strict';
/**
 * A separate OS process sharing one Redis with its siblings, driven over IPC by
 * redis-concurrency.test.ts. It loads the BUILT package, as an app server would.
 *
 * argv: <path to dist/index.cjs> <redis port> <clock skew in ms>
 * Messages in:  { type: 'run', id, key, count, prefix, policy: PolicyOptions, sendClock, lease? }
 *               { type: 'exit' }
 * Messages out: { type: 'ready' } once connected; { type: 'done', id, admitted, delayed, degraded, errors }
 */
const [distPath, port, skew] = process.argv.slice(2);
const skewMs = Number(skew);
// This machine's clock is off by skewMs: everything below that reads Date.now() sees it.
const realNow = Date.now;
Date.now = () => realNow() + skewMs;

const Redis = require('ioredis');
const { createLimiter, RedisStore } = require(distPath);

const client = new Redis({ host: '127.0.0.1', port: Number(port) });
const store = new RedisStore({ client });

client.once('ready', () => process.send({ type: 'ready' }));
// The test runner went away: never outlive it.
process.on('disconnect', () => process.exit(0));

process.on('message', (message) => {
  if (message.type === 'exit') {
    client.disconnect();
    process.exit(0);
  }
  if (message.type !== 'run') return;
  const { id, key, count, prefix, sendClock, lease } = message;
  const limiter = createLimiter({
    ...message.policy,
    store,
    prefix,
    // A limiter sends a time only when given a clock: without one, Redis decides on its TIME.
    ...(sendClock ? { clock: Date.now } : {}),
    ...(lease === undefined ? {} : { lease }),
    // Every decision must come from Redis: a slow one must not fall back to a local store here.
    timeoutMs: 60_000,
    onStoreError: 'fail-closed',
  });
  const consume = () => limiter.consume(key);
  // All at once: `count` requests in flight together on this process's connection.
  Promise.allSettled(Array.from({ length: count }, consume)).then((results) => {
    const verdicts = results.filter((r) => r.status === 'fulfilled').map((r) => r.value);
    process.send({
      type: 'done',
      id,
      admitted: verdicts.filter((v) => v.allowed).length,
      delayed: verdicts.filter((v) => v.allowed && v.delayMs > 0).length,
      degraded: verdicts.filter((v) => v.degraded !== undefined).length,
      errors: results.filter((r) => r.status === 'rejected').map((r) => String(r.reason)),
    });
  });
});
