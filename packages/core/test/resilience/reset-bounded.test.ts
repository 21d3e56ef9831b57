import Redis from 'ioredis';
import { createLimiter, RedisStore, StoreTimeoutError } from '../../src';
import { useRedisServer } from '../harness/redis-fixtures';
import { startTcpProxy } from '../harness/tcp-proxy';

/**
 * `limiter.reset` on a store that does not answer settles within `timeoutMs`, as every other call
 * of a limiter does: an admin endpoint resetting a key must not hang on a network that dropped.
 */
const redis = useRedisServer();

test.each([
  ['one rule', { rate: '10/1m' }],
  ['several rules', { rate: ['10/1s', '100/1m'] }],
] as const)(
  '%s: a reset through a network that drops everything rejects after timeoutMs',
  async (_name, rate) => {
    const proxy = await startTcpProxy(redis.server().port);
    const client = new Redis({ host: '127.0.0.1', port: proxy.port });
    try {
      await client.ping();
      const limiter = createLimiter({
        ...rate,
        store: new RedisStore({ client }),
        prefix: 'reset-bounded',
        timeoutMs: 100,
      });
      await limiter.consume('k'); // scripts loaded
      proxy.setBlackhole(true);
      const started = performance.now();
      await expect(limiter.reset('k')).rejects.toBeInstanceOf(StoreTimeoutError);
      expect(performance.now() - started).toBeLessThan(1000);
    } finally {
      proxy.setBlackhole(false);
      client.disconnect();
      await proxy.close();
    }
  },
);
