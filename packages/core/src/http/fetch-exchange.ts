import type { ListenableResponse } from './response-close';

/** What the exchange reads of a Fetch request's `signal`. */
export interface AbortSignalLike {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/**
 * One request and its response on a Fetch-API runtime, in the shape core's holds and permits
 * watch on Node (`holdRequest`, `concurrencyLimit`): it closes once — when the client leaves (the
 * request's `signal` aborts, as Bun, Deno and `@hono/node-server` report a client that
 * disconnected) or when the adapter {@link FetchExchange.end | ends} it because the handler's
 * `Response` is ready. A Fetch runtime hands the response over as one value and says nothing
 * when its body has been written, so a permit goes back when the handler returns: a streamed
 * body is not waited for.
 *
 * @example
 * ```ts
 * const exchange = new FetchExchange(request.signal);
 * try {
 *   return await handler(request);
 * } finally {
 *   exchange.end();
 * }
 * ```
 */
export class FetchExchange implements ListenableResponse {
  /** `undefined` once closed. */
  #listeners: Array<() => void> | undefined = [];
  readonly #signal: AbortSignalLike | undefined;
  readonly #onAbort = (): void => this.end();
  /** The handler's response, once {@link FetchExchange.end} was given it. */
  #response: { readonly status: number } | undefined;

  /** @param signal - the request's `signal`; without one, the exchange ends only by {@link FetchExchange.end} */
  constructor(signal?: AbortSignalLike) {
    this.#signal = signal;
    if (signal?.aborted === true) this.#listeners = undefined;
    else signal?.addEventListener('abort', this.#onAbort);
  }

  /** `true` once the client left or the exchange was ended. */
  get closed(): boolean {
    return this.#listeners === undefined;
  }

  /** As {@link FetchExchange.closed}: what a Node socket calls `destroyed`. */
  get destroyed(): boolean {
    return this.#listeners === undefined;
  }

  /**
   * The handler's `Response` the exchange was {@link FetchExchange.end | ended} with; `undefined`
   * while open, and when the client left or the handler threw (`countWhen` reads it).
   */
  get response(): { readonly status: number } | undefined {
    return this.#response;
  }

  /** The response's status, as Node's `statusCode` (500 without a response: nothing was answered). */
  get statusCode(): number {
    return this.#response?.status ?? 500;
  }

  /** Whether a response was handed over, as Node's `writableFinished` says of a response sent. */
  get writableFinished(): boolean {
    return this.#response !== undefined;
  }

  /** Calls `listener` once, when the exchange closes (never, if it has closed already). */
  on(_event: 'close', listener: () => void): this {
    this.#listeners?.push(listener);
    return this;
  }

  /** As {@link FetchExchange.on}: the exchange closes once. */
  once(event: 'close', listener: () => void): this {
    return this.on(event, listener);
  }

  removeListener(_event: 'close', listener: () => void): this {
    const listeners = this.#listeners;
    const at = listeners?.indexOf(listener) ?? -1;
    if (at >= 0) listeners?.splice(at, 1);
    return this;
  }

  /**
   * Closes the exchange (the response is ready, or the client left): every listener runs, once.
   *
   * @param response - the handler's `Response`, when it returned one: what `countWhen` reads
   */
  end(response?: { readonly status: number }): void {
    const listeners = this.#listeners;
    if (listeners === undefined) return;
    this.#listeners = undefined;
    this.#response = response;
    this.#signal?.removeEventListener('abort', this.#onAbort);
    for (const listener of listeners) listener();
  }
}
