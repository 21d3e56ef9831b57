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
    return store === undefined ? options : { ...options, store, prefix: `${name}-${++prefixes}` };
  };
}
