import { EventEmitter } from 'node:events';
import { RedisStore as SluiceRedisStore, type Store } from '@sluice/core';
import { createHttpLimiter, type HttpRequest } from '@sluice/core/adapter';
import type Redis from 'ioredis';
import { ADMIT_ALL, WINDOW_MS } from '../limits';
import { SHARED_STORE_TIMEOUT_MS } from '../sluice-limiter';
import type { Candidate } from './candidates';

/** The candidate's id: the goal on its script calls per request finds it by it. */
export const COUNT_WHEN_ID = 'count-when:failed';

/** Node's response as `countWhen` reads it: sent with 200, then closed, as Node emits `close` after `finish`. */
class SentResponse extends EventEmitter {
  statusCode = 200;
  writableFinished = false;

  send(): void {
    this.writableFinished = true;
    this.emit('close');
  }
}

/**
 * The HTTP layer's login limit, `countWhen: 'failed'`, on successful traffic: every request takes
 * its unit (a script call, or one request of a batch call), then, once its 200 is sent, gives it
 * back (another, through the same batch). A decision is one request, its give-back landed: the
 * store's `giveBackTaken` is watched so the request waits for it, and the commands counted
 * between the bench's frames include every give-back.
 */
export function countWhenCandidate(port: number, connect: (port: number) => Redis): Candidate {
  const client = connect(port);
  const redisStore = new SluiceRedisStore({ client });
  let landing: Promise<void> | undefined;
  // The store as it is, its give-backs seen as they are sent (synchronously, at the response's close).
  const store = new Proxy(redisStore, {
    get(target, name) {
      if (name === 'giveBackTaken') {
        return (...args: Parameters<NonNullable<Store['giveBackTaken']>>) =>
          (landing = target.giveBackTaken(...args));
      }
      const value: unknown = Reflect.get(target, name, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  let fallbacks = 0;
  const limit = createHttpLimiter<string, never, SentResponse>({
    key: '$http_x_user',
    rate: { limit: ADMIT_ALL, window: WINDOW_MS },
    countWhen: 'failed',
    store,
    prefix: 'bench-count-when',
    timeoutMs: SHARED_STORE_TIMEOUT_MS,
    blockCache: true,
    onCallbackError: () => fallbacks++,
  });
  limit.limiters[0]?.on('fallback', () => fallbacks++);
  return {
    id: COUNT_WHEN_ID,
    name: "sluice HTTP limit, countWhen: 'failed', 200s (each unit given back)",
    client,
    admitted: async (key) => {
      const http: HttpRequest = { remoteAddress: '127.0.0.1', url: '/login', headers: { 'x-user': key } };
      const response = new SentResponse();
      const outcome = await limit.decide(key, http, response);
      response.send();
      const given = landing;
      landing = undefined;
      await given;
      return outcome.kind === 'next';
    },
    withoutStore: () => fallbacks,
  };
}
