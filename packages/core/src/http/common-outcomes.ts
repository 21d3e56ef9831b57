// What the HTTP limits (`rateLimit`, `concurrencyLimit`, `adaptiveLimit`) answer alike.

/** Status of a request refused by `onMissingKey: 'reject'`: Bad Request, whatever `status` says. */
export const MISSING_KEY_STATUS = 400;

/** Header set on requests `dryRun` let through: `rejected` or `delayed`, what would have happened. */
export const DRY_RUN_HEADER = 'Sluice-Dry-Run';

// The answers of the permit limits (`concurrencyLimit`, `adaptiveLimit`) that carry no reply of
// their own: one object each, shared by every request.

/** Pass the request on. */
export const NEXT = { kind: 'next', headers: [] } as const;
/** Pass on a request over the limit that `dryRun` let through, saying so. */
export const DRY_RUN_NEXT = { kind: 'next', headers: [[DRY_RUN_HEADER, 'rejected']] } as const;
/** Nothing to do: the client left while the request waited for its permit. */
export const GONE = { kind: 'gone' } as const;
