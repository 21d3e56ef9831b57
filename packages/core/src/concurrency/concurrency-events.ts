import { LimiterEmitter } from '../resilience/events';
import type { ConcurrencyEventName, ConcurrencyEvents } from './concurrency-types';

/** The rate limiter's emitter, typed for a concurrency limiter's events. */
export interface ConcurrencyEmitter {
  on<E extends ConcurrencyEventName>(event: E, listener: (payload: ConcurrencyEvents[E]) => void): unknown;
  off<E extends ConcurrencyEventName>(event: E, listener: (payload: ConcurrencyEvents[E]) => void): unknown;
  has(event: ConcurrencyEventName): boolean;
  emit<E extends ConcurrencyEventName>(event: E, payload: ConcurrencyEvents[E]): void;
}

/**
 * An emitter for a concurrency limiter. It is the rate limiter's `LimiterEmitter` (its listener
 * bookkeeping and its rule that a throwing listener never breaks a request), which keys
 * listeners by name whatever the events: only its types are the rate limiter's, so they are
 * swapped here rather than the class made generic.
 */
export function concurrencyEmitter(): ConcurrencyEmitter {
  return new LimiterEmitter() as unknown as ConcurrencyEmitter;
}
