// Internals of peers that their packages do not type: the memory stores behind their middleware,
// driven directly by the memory section as their middleware drives them on each request.

declare module 'koa-ratelimit' {
  import type { Context, Middleware } from 'koa';
  interface KoaRateLimitOptions {
    driver: 'memory' | 'redis';
    db: unknown;
    duration?: number;
    max?: number;
    id?: (ctx: Context) => string | false;
    namespace?: string;
  }
  function ratelimit(options: KoaRateLimitOptions): Middleware;
  export = ratelimit;
}

declare module 'koa-ratelimit/limiter/memory' {
  class MemoryLimiter {
    constructor(options: { id: string; db: Map<string, unknown>; max: number; duration: number });
    get(): Promise<{ remaining: number; reset: number; total: number }>;
  }
  export = MemoryLimiter;
}

declare module '@fastify/rate-limit/store/LocalStore' {
  class LocalStore {
    constructor(continueExceeding: boolean, exponentialBackoff: boolean, cache: number);
    incr(
      key: string,
      callback: (error: Error | null, result: { current: number; ttl: number }) => void,
      timeWindow: number,
      max: number,
    ): void;
  }
  export = LocalStore;
}
