/**
 * What {@link RedisStore} uses of an ioredis client, declared here rather than imported so that
 * `@sluice/core`'s types never require ioredis: users of the memory store need not install it.
 * ioredis `Redis` and `Cluster` (5 and 6) both fit; a type test keeps it so.
 *
 * `defineCommand` registers a Lua script as a method that sends EVALSHA and, on NOSCRIPT only,
 * sends the script again (ioredis does this itself); `del` serves `reset`.
 */
export interface RedisStoreClient {
  /** ioredis `defineCommand`: adds `client[name](...keys, ...args)`, resolving the script's reply. */
  defineCommand(name: string, definition: { lua: string; numberOfKeys?: number }): void;
  /** ioredis `del`. */
  del(...keys: string[]): Promise<number>;
  /**
   * `true` on an ioredis `Cluster` (its own flag, not a sniffed class name): the store then
   * batches per hash slot, since one script call may not span two.
   */
  readonly isCluster?: boolean;
}

/** A command added by `defineCommand`: keys first, then arguments. */
export type ScriptCommand = (...keysAndArgs: string[]) => Promise<unknown>;
