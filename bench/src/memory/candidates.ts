import { ALGORITHMS, MemoryStore, createLimiter, type AlgorithmName } from '@sluice/core';
import LocalStore from '@fastify/rate-limit/store/LocalStore';
import { MemoryStore as ErlMemoryStore, type Options as ErlOptions } from 'express-rate-limit';
import MemoryLimiter from 'koa-ratelimit/limiter/memory';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { WINDOW_MS } from '../limits';

/** One store under measurement: `add` records a first request for a key, as a request would. */
export interface HeapCandidate {
  readonly id: string;
  readonly name: string;
  /** Builds the store for `keys` keys; returns how to add one and how many keys it then holds. */
  make(keys: number): { add(key: string): unknown; held(): number | undefined };
}

const LIMIT = 100;

function sluice(algorithm: AlgorithmName): HeapCandidate {
  return {
    id: `sluice:${algorithm}`,
    name: `sluice MemoryStore, ${algorithm}`,
    make(keys) {
      const store = new MemoryStore({ maxKeys: keys });
      const limiter = createLimiter({
        algorithm,
        rate: { limit: LIMIT, window: WINDOW_MS },
        store,
        ...(algorithm === 'leaky-bucket' ? { nodelay: true } : {}),
      });
      return { add: (key) => limiter.consume(key), held: () => store.size };
    },
  };
}

/** Every candidate of the memory section, the plain-Map floor first. */
export const HEAP_CANDIDATES: readonly HeapCandidate[] = [
  {
    id: 'map',
    name: 'plain Map of objects { tokens, last }',
    make() {
      const map = new Map<string, { tokens: number; last: number }>();
      return {
        add: (key) => map.set(key, { tokens: LIMIT - 1, last: Date.now() }),
        held: () => map.size,
      };
    },
  },
  ...ALGORITHMS.map(sluice),
  {
    id: 'rate-limiter-flexible',
    name: 'rate-limiter-flexible RateLimiterMemory',
    make() {
      const limiter = new RateLimiterMemory({ points: LIMIT, duration: WINDOW_MS / 1000 });
      return { add: (key) => limiter.consume(key), held: () => undefined };
    },
  },
  {
    id: 'express-rate-limit',
    name: 'express-rate-limit MemoryStore',
    make() {
      const store = new ErlMemoryStore();
      store.init({ windowMs: WINDOW_MS } as ErlOptions);
      return { add: (key) => store.increment(key), held: () => undefined };
    },
  },
  {
    id: 'koa-ratelimit',
    name: 'koa-ratelimit memory driver',
    make() {
      const db = new Map<string, unknown>();
      // The middleware builds one limiter per request around the shared Map.
      return {
        add: (id) => new MemoryLimiter({ id, db, max: LIMIT, duration: WINDOW_MS }).get(),
        held: () => db.size,
      };
    },
  },
  {
    id: '@fastify/rate-limit',
    name: '@fastify/rate-limit LocalStore (cache = keys)',
    make(keys) {
      const store = new LocalStore(false, false, keys);
      return { add: (key) => store.incr(key, () => undefined, WINDOW_MS, LIMIT), held: () => undefined };
    },
  },
];
