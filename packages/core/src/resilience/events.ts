import type { SluiceConfigError } from '../policy/config-error';
import type { Decision } from '../types';
import type { StoreErrorScope } from './store-errors';
import { callListener } from '../limiter/thenable';

/** How a decision was made when the store could not make it. */
export type DegradedMode = 'fail-open' | 'fail-closed' | 'insurance';

/** Payload of the `storeError` event. */
export interface StoreErrorEvent {
  /** What the store call failed with: a `StoreTimeoutError` when it was slower than `timeoutMs`. */
  readonly error: Error;
  /** The user key the request was for. */
  readonly key: string;
  /** How the request was decided instead. */
  readonly mode: DegradedMode;
  /**
   * `'store'`: the store failed (connection, timeout, a server that cannot serve now such as
   * `LOADING`, `MASTERDOWN`, `CLUSTERDOWN`, `OOM`); counts toward opening the circuit.
   * `'key'`: the store answered with an error about this one key's data (`WRONGTYPE`, an error
   * raised in the script run on it); the circuit is unaffected, other keys are decided as usual.
   * `'slot'`: the key's Redis Cluster slot is moving between masters (`TRYAGAIN`, `MOVED`, `ASK`
   * the client did not follow); the circuit is unaffected, as for `'key'`.
   */
  readonly scope: StoreErrorScope;
  /**
   * Present when the call timed out and its timer fired late: ms this process's event loop was
   * blocked (synchronous work) past `timeoutMs`, so the decision came that much later than the
   * timeout. A reply that was waiting during such a stall is read and used, never a timeout.
   */
  readonly eventLoopLagMs?: number;
}

/** The events a limiter emits, with their payloads. */
export interface LimiterEvents {
  /** A request was rejected (by the store, the insurance store or fail-closed). */
  limited: Decision;
  /** The store failed or was slower than `timeoutMs`; `mode` says how the request was decided instead. */
  storeError: StoreErrorEvent;
  /** The store answered again after failing; `downMs` since its first failure. */
  storeRecovered: { readonly downMs: number; readonly failures: number };
  /** A decision was made without the store (circuit open or store error). */
  fallback: Decision;
  /**
   * A per-key override's value is not a valid rate: the key is limited by the limiter's own
   * rate meanwhile. Reported once per distinct value (by its text, or identity for objects).
   */
  overrideError: { readonly error: SluiceConfigError; readonly key: string; readonly value: unknown };
}

/** Name of a limiter event. */
export type LimiterEventName = keyof LimiterEvents;

/** A listener of one event. */
export type LimiterListener<E extends LimiterEventName> = (payload: LimiterEvents[E]) => void;

/**
 * A small typed emitter. A listener that throws never breaks a request: the error is reported
 * once per emitter as a process warning and otherwise ignored.
 */
export class LimiterEmitter {
  readonly #listeners: { [E in LimiterEventName]?: Array<LimiterListener<E>> } = {};
  #warned = false;

  /** Adds a listener. */
  on<E extends LimiterEventName>(event: E, listener: LimiterListener<E>): this {
    ((this.#listeners[event] ??= []) as Array<LimiterListener<E>>).push(listener);
    return this;
  }

  /** Removes a listener added with {@link LimiterEmitter.on}. */
  off<E extends LimiterEventName>(event: E, listener: LimiterListener<E>): this {
    const list = this.#listeners[event] as Array<LimiterListener<E>> | undefined;
    const index = list?.indexOf(listener) ?? -1;
    if (list && index >= 0) list.splice(index, 1);
    return this;
  }

  /** Whether anyone listens: lets hot paths skip building a payload. */
  has(event: LimiterEventName): boolean {
    return (this.#listeners[event]?.length ?? 0) > 0;
  }

  emit<E extends LimiterEventName>(event: E, payload: LimiterEvents[E]): void {
    const list = this.#listeners[event] as Array<LimiterListener<E>> | undefined;
    if (!list) return;
    for (const listener of list) {
      callListener(listener, payload, (error) => {
        if (this.#warned) return;
        this.#warned = true;
        process.emitWarning(
          `a sluice '${event}' listener threw (ignored; further ones are not reported): ${String(error)}`,
          'SluiceListenerWarning',
        );
      });
    }
  }
}
