/**
 * Whether `value` is a promise (or any thenable): what a user function returned when it was
 * declared `async` where sluice asks for an answer at once.
 */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

/**
 * Calls a user's listener (a limiter event's, `onLimit`, `onCallbackError`): what it throws, and
 * what a promise it returns rejects with (a listener declared `async`, as logging ones often
 * are), go to `failed`, never out of sluice: a rejection nobody handles ends a Node 20 process.
 */
export function callListener<T>(
  listener: (payload: T) => unknown,
  payload: T,
  failed: (error: unknown) => void,
): void {
  let result: unknown;
  try {
    result = listener(payload);
    if (isThenable(result)) result.then(undefined, failed);
  } catch (error) {
    failed(error);
  }
}
