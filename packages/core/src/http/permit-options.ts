import { SluiceConfigError } from '../policy/config-error';
import type { CallbackErrorEvent, MaybePromise } from './http-options';
import type { ResolvedFallback } from './resolve-fallback';
import { refuseLimiterOptions } from './resolve-http-options';

// What the two permit limits, `concurrencyLimit` and `adaptiveLimit`, resolve alike from their options.

/**
 * The options of a permit limit (`concurrencyLimit`, `adaptiveLimit`) that both resolve alike,
 * validated: the part of each resolved limit that its refusals and the user's callbacks read.
 *
 * @typeParam TEvent - what its `onLimit` receives
 */
export interface ResolvedPermitLimit<TRequest, THandler, TEvent> {
  readonly skip: ((request: TRequest) => MaybePromise<boolean>) | undefined;
  readonly status: number;
  readonly fallback: ResolvedFallback<THandler>;
  readonly dryRun: boolean;
  readonly onLimit: ((event: TEvent) => void) | undefined;
  readonly onCallbackError: ((event: CallbackErrorEvent<TRequest>) => void) | undefined;
}

/** A kind of permit limiter, as {@link permitLimiterOf} makes or checks one. */
export interface PermitLimiterKind<TLimiter> {
  /** Makes one from the limiter options (`createConcurrencyLimiter`, `createAdaptiveLimiter`). */
  readonly create: (options: Record<string, unknown>) => TLimiter;
  /** The name of `create`, for the error when a ready `limiter` is not one. */
  readonly factory: string;
  /** Every option name the limit accepts, the limiter's then the HTTP ones: told when one is unknown. */
  readonly names: readonly string[];
}

/**
 * A permit limit's limiter: made from the limiter options `core`, or the ready `limiter` given
 * (when it is one, and no limiter option came with it).
 *
 * @throws {@link SluiceConfigError} naming an unknown or invalid option, or `limiter`
 */
export function permitLimiterOf<TLimiter extends { readonly acquire: unknown }>(
  limiter: unknown,
  core: Record<string, unknown>,
  kind: PermitLimiterKind<TLimiter>,
): TLimiter {
  if (limiter === undefined) {
    try {
      return kind.create(core);
    } catch (error) {
      if (error instanceof SluiceConfigError && error.code === 'SLUICE_UNKNOWN_OPTION') {
        // Name the HTTP options too: a typo such as `keys` or `priorty` may have meant one of them.
        throw new SluiceConfigError(
          error.option,
          error.value,
          `unknown option; accepted: ${kind.names.join(', ')}`,
          error.code,
        );
      }
      throw error;
    }
  }
  if (
    typeof limiter !== 'object' ||
    limiter === null ||
    typeof (limiter as TLimiter).acquire !== 'function'
  ) {
    throw new SluiceConfigError('limiter', limiter, `expected a limiter from ${kind.factory}()`);
  }
  refuseLimiterOptions(core);
  return limiter as TLimiter;
}
