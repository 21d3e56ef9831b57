import { SluiceConfigError } from '../policy/config-error';

/**
 * Runs `create`, which builds limits from options an adapter also reads some of its own from
 * (Fastify's `hook`), so that an unknown option's error names those too: a typo of one of them
 * (`hok`) is then explained where the user looks, beside the core and HTTP option names.
 *
 * @param names - the adapter's own option names, as the user writes them
 * @param where - how the message introduces them, e.g. `'Fastify plugin options'`
 * @param create - builds the limits (`createHttpLimiter`, …)
 * @returns what `create` returns
 * @throws what `create` throws; an unknown-option {@link SluiceConfigError} with the names added
 * @example
 * ```ts
 * const gate = namingAdapterOptions(['hook'], 'Fastify plugin options', () => createHttpLimiter(options));
 * // hok "preHandler": unknown option; accepted: rate, …; HTTP options: key, …; Fastify plugin options: hook
 * ```
 */
export function namingAdapterOptions<T>(names: readonly string[], where: string, create: () => T): T {
  try {
    return create();
  } catch (error) {
    if (!(error instanceof SluiceConfigError) || error.code !== 'SLUICE_UNKNOWN_OPTION') throw error;
    throw new SluiceConfigError(
      error.option,
      error.value,
      `${error.accepted}; ${where}: ${names.join(', ')}`,
      error.code,
    );
  }
}
