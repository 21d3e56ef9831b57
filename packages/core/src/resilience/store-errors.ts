/** The store did not answer within `timeoutMs`. */
export class StoreTimeoutError extends Error {
  override readonly name = 'StoreTimeoutError';
  constructor(readonly timeoutMs: number) {
    super(`the rate-limit store did not answer within ${timeoutMs} ms (timeoutMs)`);
  }
}

/** Settles like `promise`, or rejects with {@link StoreTimeoutError} after `ms`. The timer never keeps the process alive. */
export function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new StoreTimeoutError(ms)), ms);
    timer.unref();
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/** Any thrown value as an Error. */
export function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
