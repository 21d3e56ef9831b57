import type { Store } from '@sluice/core';
import type { ContractOptions } from './drivers';

/** A store the contract runs on: `undefined` is the default (a MemoryStore per limiter). */
export interface StoreUnderTest {
  readonly name: string;
  store(): Store | undefined;
}

let prefixes = 0;

/** Options on the store under test, each limiter in a namespace of its own (`<name>-<n>`). */
export function storeOptions(
  under: StoreUnderTest,
  name: string,
): (options: ContractOptions) => ContractOptions {
  return (options) => {
    const store = under.store();
    // A loaded 2-core machine can keep a Redis reply past the default 50 ms: the contract is about
    // what adapters do with decisions, so it gives Redis time instead of measuring the insurance
    // store (timeouts have tests of their own in core).
    return store === undefined
      ? options
      : { timeoutMs: 2000, ...options, store, prefix: `${name}-${++prefixes}` };
  };
}
