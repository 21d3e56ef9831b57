import { readsClientAddress } from '../keys/key-template';
import { SluiceConfigError } from '../policy/config-error';

/**
 * One limit's options, or several, parted from the `clientAddress` option of the Fetch-API
 * adapters (`@sluice/hono`): where a runtime gives no client address, this function finds it.
 */
export interface ClientAddressSplit<TOptions, TAddress> {
  /** The options without `clientAddress`, as core's limits take them. */
  readonly limits: TOptions | TOptions[];
  readonly clientAddress: TAddress | undefined;
  /** Whether some limit's key reads the client address (`$binary_remote_addr`, the default, or `$remote_addr`). */
  readonly readsAddress: boolean;
}

/**
 * Takes the `clientAddress` option out of a limit's options (or, with several limits, the
 * first's: a request has one address), validated, and tells whether some limit's key reads the
 * client address, so the adapter can refuse to run without one rather than key every client alike.
 *
 * @param options - one limit's options, or several in order
 * @throws {@link SluiceConfigError} naming `clientAddress` when it is not a function, or is given
 *   on a limit other than the first
 * @example
 * ```ts
 * const { limits, clientAddress, readsAddress } = takeClientAddress(options);
 * if (readsAddress && clientAddress === undefined) throw new SluiceConfigError('clientAddress', undefined, '…');
 * ```
 */
export function takeClientAddress<TOptions, TAddress extends (...args: never[]) => unknown>(
  options: TOptions | readonly TOptions[],
): ClientAddressSplit<TOptions, TAddress> {
  const list: readonly unknown[] = Array.isArray(options) ? options : [options];
  let clientAddress: TAddress | undefined;
  let readsAddress = false;
  const limits = list.map((each, i) => {
    if (typeof each !== 'object' || each === null || !Object.hasOwn(each, 'clientAddress')) {
      readsAddress ||= readsAddressIn(each);
      return each as TOptions;
    }
    const { clientAddress: given, ...rest } = each as { clientAddress?: unknown };
    if (given !== undefined && typeof given !== 'function') {
      throw new SluiceConfigError(
        'clientAddress',
        given,
        'expected a function of the request giving the client address (a string), or undefined when unknown',
      );
    }
    if (given !== undefined && i > 0) {
      throw new SluiceConfigError(
        'clientAddress',
        given,
        'give it with the first limit: a request has one client address, for all its limits',
      );
    }
    clientAddress = given as TAddress | undefined;
    readsAddress ||= readsAddressIn(rest);
    return rest as TOptions;
  });
  return { limits: Array.isArray(options) ? limits : (limits[0] as TOptions), clientAddress, readsAddress };
}

/** Whether a limit keys by the client address: its `key` reads it, or is left to the default `$binary_remote_addr`. */
function readsAddressIn(options: unknown): boolean {
  if (typeof options !== 'object' || options === null) return false;
  const { key } = options as { key?: unknown };
  return key === undefined || (typeof key === 'string' && readsClientAddress(key));
}
