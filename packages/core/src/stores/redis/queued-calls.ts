import type { Policy } from '../../types';
import type { Outcome } from '../consume-to';
import type { StoreRequest } from '../store';
import { storeErrorScope } from '../../resilience/store-errors';
import { alone, readOwn, type AloneCalls } from './alone-calls';
import { runBatch, ScriptEntry, type Op, type OwnCall } from './batch-call';

/**
 * A `RedisStore` request as it waits in the batch queue (see `RedisStore.#runTo`): `timeoutMs`
 * absent is 0, as the queue reads it.
 */
export function queuedEntry(
  op: Op,
  keys: readonly string[],
  policies: readonly Policy[],
  { cost, nowMs, timeoutMs }: Pick<StoreRequest, 'cost' | 'nowMs' | 'timeoutMs'>,
  rules: boolean,
  group: number,
  deadline: number,
  to: Outcome<unknown>,
  own: OwnCall | undefined,
  until: number | undefined,
): ScriptEntry {
  return new ScriptEntry(
    op,
    keys,
    policies,
    cost,
    nowMs,
    rules,
    group,
    timeoutMs ?? 0,
    deadline,
    to,
    own,
    until,
  );
}

/**
 * The requests of a `RedisStore` that waited in its batch queue, sent as the queue releases them
 * (its `SendBatch`): one as its own call, several as one call of the batch script.
 */
export class QueuedCalls {
  /** Each operation as its own call, and the batch script. */
  readonly #calls: AloneCalls;
  /** On a Cluster, a batch refused while its slot moves is sent again one by one. */
  readonly #cluster: boolean;

  constructor(calls: AloneCalls, cluster: boolean) {
    this.#calls = calls;
    this.#cluster = cluster;
  }

  /** Sends a batch: one request as its own call, several as one call of the batch script. */
  send(batch: readonly ScriptEntry[], landed: () => void): void {
    if (batch.length > 1) return runBatch(this.#calls.scripts.batch, batch, landed, this.#oneByOne);
    this.#sendAlone(batch[0] as ScriptEntry, landed);
  }

  /** One request as its own call, settled from its reply; `landed` (if any) frees its place first. */
  #sendAlone(entry: ScriptEntry, landed?: () => void): void {
    this.#alone(entry).then(
      (value) => {
        landed?.();
        entry.resolve(value);
      },
      (error: unknown) => {
        landed?.();
        entry.fail(error);
      },
    );
  }

  /**
   * On Cluster, a batch call refused because its slot is moving between masters (`TRYAGAIN`:
   * several keys of a slot half migrated, or not yet on the master a redirection reached) never
   * ran: its requests are sent again one per call, each still within its deadline. Most are of
   * one key, which the client's redirection takes to wherever it is now.
   */
  readonly #oneByOne = (batch: readonly ScriptEntry[], error: unknown): boolean => {
    if (!this.#cluster || storeErrorScope(error) !== 'slot') return false;
    const now = performance.now();
    for (const entry of batch) {
      if (now < entry.deadline) this.#sendAlone(entry);
      else entry.fail(error);
    }
    return true;
  };

  /** A request as its own call; a client that throws makes it a rejection. */
  #alone({ op, keys, policies, cost, nowMs, rules, own, until }: ScriptEntry): Promise<unknown> {
    if (own === undefined) return this.#calls.run(op, keys, policies, cost, nowMs, rules, until);
    const reply = alone(own, until);
    return own.readAlone === undefined ? reply : reply.then((value) => readOwn(own, value));
  }
}
