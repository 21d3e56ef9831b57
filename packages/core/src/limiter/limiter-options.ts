import { SluiceConfigError } from '../policy/config-error';
import { isPlainObject } from '../policy/option-checks';
import { MAX_LIMIT } from '../policy/rate';
import type { Store } from '../stores/store';

/** Every option name `createLimiter` accepts: any other is a `SluiceConfigError`. */
export const OPTION_NAMES = new Set([
  'rate',
  'burst',
  'algorithm',
  'nodelay',
  'delay',
  'store',
  'prefix',
  'clock',
  'cost',
  'onStoreError',
  'timeoutMs',
  'blockCache',
  'queue',
  'rules',
  'overrides',
  'warmup',
  'lease',
  'name',
  'metrics',
  'block',
]);

/**
 * `true` when the store (and the insurance store, for a remote one) can decide several rules at
 * once; else the error to throw when several are configured.
 */
export function supportsRules(store: Store, insurance: Store | undefined): true | SluiceConfigError {
  const inProcess = store.consumeSync !== undefined;
  const decides = inProcess
    ? typeof store.consumeRulesSync === 'function'
    : typeof store.consumeRules === 'function';
  if (!decides || typeof store.resetRules !== 'function') {
    return new SluiceConfigError(
      'store',
      store,
      `several limits need a store with ${inProcess ? 'consumeRulesSync' : 'consumeRules'} and resetRules, as MemoryStore and RedisStore have`,
    );
  }
  if (!inProcess && insurance !== undefined && typeof insurance.consumeRules !== 'function') {
    return new SluiceConfigError(
      'onStoreError.insurance',
      insurance,
      'several limits need an insurance store with consumeRules, as MemoryStore has',
    );
  }
  return true;
}

/** `blockCache` → how many blocked keys to remember (0: off). */
export function resolveBlockCache(value: unknown): number {
  if (value === undefined || value === true) return 10_000;
  if (value === false) return 0;
  if (isPlainObject(value) && Object.keys(value).every((name) => name === 'maxKeys')) {
    const { maxKeys = 10_000 } = value as { maxKeys?: unknown };
    if (typeof maxKeys === 'number' && Number.isInteger(maxKeys) && maxKeys >= 1) return maxKeys;
    throw new SluiceConfigError('blockCache.maxKeys', maxKeys, 'must be a whole number >= 1');
  }
  throw new SluiceConfigError('blockCache', value, 'expected true, false or { maxKeys: number }');
}

/**
 * The options of one call (`consume`, `peek`, `cancel`): an object whose names are `accepted`, so
 * a misspelt `costs` is named instead of silently charging the default cost.
 *
 * @throws {@link SluiceConfigError} naming `options`, or the unknown name
 */
export function checkCallOptions(options: unknown, accepted: readonly string[]): void {
  if (options === undefined) return;
  if (typeof options !== 'object' || options === null) {
    throw new SluiceConfigError(
      'options',
      options,
      `expected an object of ${accepted.join(', ')}`,
      'SLUICE_INVALID_ARGUMENT',
    );
  }
  for (const name in options) {
    if (!accepted.includes(name)) {
      throw new SluiceConfigError(
        name,
        (options as Record<string, unknown>)[name],
        `unknown option of this call; accepted: ${accepted.join(', ')}`,
        'SLUICE_UNKNOWN_OPTION',
      );
    }
  }
}

/**
 * A cost given as an option or to a call, checked: a whole number of units.
 *
 * @throws {@link SluiceConfigError} naming `option` otherwise
 */
export function checkCost(option: string, cost: unknown): number {
  if (typeof cost !== 'number' || !Number.isInteger(cost) || cost < 0 || cost > MAX_LIMIT) {
    throw new SluiceConfigError(
      option,
      cost,
      `must be a whole number from 0 to ${MAX_LIMIT}`,
      'SLUICE_INVALID_ARGUMENT',
    );
  }
  return cost;
}

/**
 * A key given to a call, checked. Any string is a key, the empty one included.
 *
 * @throws {@link SluiceConfigError} naming `key` when it is not a string
 */
export function checkKey(key: unknown): void {
  if (typeof key !== 'string')
    throw new SluiceConfigError('key', key, 'must be a string', 'SLUICE_INVALID_ARGUMENT');
}
