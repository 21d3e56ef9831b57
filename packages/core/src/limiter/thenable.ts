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
