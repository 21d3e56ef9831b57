/**
 * The clients {@link RedisStore} takes, declared here rather than imported so that
 * `@sluice/core`'s types never require a Redis client: users of the memory store need not
 * install one. Type tests keep ioredis `Redis` and `Cluster` (5 and 6), iovalkey, and node-redis
 * (`redis` 4, 5 and 6) `createClient()` / `createCluster()` fitting.
 */

/**
 * What the store uses of an ioredis (or iovalkey) client. `defineCommand` registers a Lua script
 * as a method that sends EVALSHA and, on NOSCRIPT only, the script itself (ioredis does this).
 */
export interface IoredisLikeClient {
  /** ioredis `defineCommand`: adds `client[name](...keys, ...args)`, resolving the script's reply. */
  defineCommand(name: string, definition: { lua: string; numberOfKeys?: number }): void;
  /** ioredis `del`. */
  del(...keys: string[]): Promise<number>;
  /** ioredis `time` (a single node's): the server's clock, `[seconds, microseconds]`. */
  time?(): Promise<unknown>;
  /** ioredis Cluster `nodes('master')`: a client per master, to read a slot's master's clock. */
  nodes?(role: 'master'): unknown[];
  /**
   * `true` on an ioredis `Cluster` (its own flag, not a sniffed class name): the store then
   * batches per hash slot, since one script call may not span two.
   */
  readonly isCluster?: boolean;
}

/**
 * What the store uses of a node-redis client (`createClient()` or `createCluster()` of the
 * `redis` package, 4 to 6), recognised by `evalSha`, `eval`, `sendCommand` and `del`; the store
 * sends its scripts with `sendCommand` (a single-node client's `(args)`, a cluster client's
 * `(firstKey, isReadonly, args)`). A cluster client is told apart by its `masters` and `slots`
 * lists, which a single-node client lacks. Loosely typed so node-redis's generic signatures fit.
 * node-redis writes a command on a later turn of the event loop (a `setImmediate`), not when it
 * is sent: a single-node client's replies are handed on one write at a time (see `ReplyGate`).
 */
export interface NodeRedisLikeClient {
  evalSha(...args: never[]): unknown;
  eval(...args: never[]): unknown;
  sendCommand(...args: never[]): unknown;
  del(...args: never[]): unknown;
}

/** A client {@link RedisStore} accepts: ioredis / iovalkey, or node-redis. */
export type RedisStoreClient = IoredisLikeClient | NodeRedisLikeClient;

/** A Lua script the store runs: its source, its SHA-1 (for EVALSHA) and the name it is defined under. */
export interface LuaScript {
  /** `sluice:<what>:<digest>`: two versions of sluice sharing a client never overwrite each other's script. */
  readonly name: string;
  readonly lua: string;
  /** The SHA-1 of `lua`, in hex, as Redis names the script. */
  readonly sha: string;
  /** `1` for a script of one key; otherwise any number, sent before the keys. */
  readonly numberOfKeys?: 1;
}

/** A script made runnable on one client: its keys (sharing one slot), then its arguments. */
export type ScriptCommand = (keys: readonly string[], args: readonly string[]) => Promise<unknown>;

/**
 * The one narrow interface the store speaks to Redis through, whatever the client: chosen once,
 * at construction (see `adaptClient`). Every script call is EVALSHA, and on NOSCRIPT only, the
 * script's text (EVAL, which loads it) once more.
 */
export interface ScriptClient {
  /** Whether keys of different slots live on different nodes: the store then batches per slot. */
  readonly isCluster: boolean;
  /** The script as a command on this client (defined once per client where the client keeps it). */
  command(script: LuaScript): ScriptCommand;
  /** `DEL` of keys sharing one slot. */
  del(keys: readonly string[]): Promise<unknown>;
  /**
   * The server's clock (`TIME`) of the node holding `key`'s slot, in epoch ms: how the store maps
   * deadlines onto it (see `ServerClock`). Rejects when the client cannot say which node that is.
   */
  time(key: string, slot: number): Promise<number>;
  /**
   * The master serving a Cluster slot as the client last learnt it (`host:port`), or `undefined`
   * when it does not know yet, or on a single node.
   */
  nodeOf(slot: number): string | undefined;
}
