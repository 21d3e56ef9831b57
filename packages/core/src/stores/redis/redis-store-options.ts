import { SluiceConfigError } from '../../policy/config-error';
import { checkOptionNames } from '../../policy/option-checks';
import { resolveBatch, type BatchOption } from './batch-option';
import { adaptClient } from './client-adapters';
import type { RedisStoreClient, ScriptClient } from './redis-client';

/** Options of `RedisStore` (`redis-store.ts`). */
export interface RedisStoreOptions {
  /**
   * Your Redis client, connected or connecting; the store never closes it:
   * - ioredis (5, 6) or iovalkey: a `Redis` (standalone, or Sentinel) or a `Cluster`. The store
   *   defines its scripts on it; commands go through the client's own settings (`keyPrefix`,
   *   timeouts, offline queue), so a `keyPrefix` lands before every sluice key.
   * - node-redis (`redis` 4, 5, 6): `createClient(...)` or `createCluster(...)`, after (or while)
   *   `connect()`. A cluster client routes each script call by its first key.
   * Told apart by their methods (`defineCommand`; `evalSha` and `eval`), never by class name.
   */
  client: RedisStoreClient;
  /**
   * A namespace put before every key this store writes, ahead of the limiter's own `prefix`:
   * keys read `<prefix>:<limiter prefix>:{<key>}:<algorithm>`. Use it to share one Redis between
   * applications. Braces in it are escaped like key text, so it never chooses the Cluster slot.
   * @defaultValue none: keys read `<limiter prefix>:{<key>}:<algorithm>`, e.g. `sluice:{user:42}:gcra@2`
   */
  prefix?: string;
  /**
   * Batching of concurrent decisions. Every request of the store goes through it: decisions (one
   * rule or several), peeks, give-backs, resets, the joint decision of several limiters' parts
   * (`consumeAll`) and its exact give-backs (`giveBackTaken`), and the permits of concurrency
   * limits (acquire, release, renew). While two calls of a slot are on their way (per store; a
   * standalone Redis is one slot, a Cluster has 16 384), further requests for that slot wait; when
   * a call returns, those waiting go out together as one call of the batch script, which decides
   * each in the order it was asked, exactly as its own call would (the same state transitions; the
   * batch is atomic). No timer: a slot with room sends at once, so a lone decision costs what it
   * costs without batching, and under load one round trip carries many. A full batch (`maxSize`
   * waiting) does not wait for a call to return: it leaves at once while the slot has fewer than
   * 16 calls on their way. A request still waiting at its limiter's `timeoutMs` is never sent: the
   * limiter decides it by `onStoreError`. `false`: one call per request (each its own script).
   * `{ maxSize }`: the most requests in one call, 2 to 1000 (a batch runs in Redis as one script,
   * holding the server meanwhile).
   * @defaultValue `true`, that is `{ maxSize: 64 }`
   * @example `new RedisStore({ client, batch: { maxSize: 16 } })`
   */
  batch?: BatchOption;
}

const OPTIONS = new Set(['client', 'prefix', 'batch']);

/** A `RedisStore`'s options, checked: its client adapted, its prefix, its largest batch (`undefined`: off). */
export interface ResolvedStoreOptions {
  readonly client: ScriptClient;
  readonly prefix: string | undefined;
  readonly maxSize: number | undefined;
}

/**
 * Checks a `RedisStore`'s options, in order: the object, unknown names, the client, the prefix,
 * the batch.
 * @throws {@link SluiceConfigError} naming the first invalid option
 */
export function resolveStoreOptions(options: RedisStoreOptions): ResolvedStoreOptions {
  if (typeof options !== 'object' || options === null) {
    throw new SluiceConfigError('options', options, 'expected an object such as { client: new Redis() }');
  }
  checkOptionNames(options, OPTIONS, 'RedisStore option');
  const { prefix } = options;
  const client = adaptClient(options.client);
  if (prefix !== undefined && (typeof prefix !== 'string' || prefix.length === 0)) {
    throw new SluiceConfigError('prefix', prefix, 'must be a non-empty string (or left out)');
  }
  return { client, prefix, maxSize: resolveBatch(options.batch) };
}
