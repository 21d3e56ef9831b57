import { SluiceConfigError } from '../../policy/config-error';
import { isPlainObject } from '../../policy/option-checks';

/** `batch` option of `RedisStore`: batching on (the default), off, or its largest call. */
export type BatchOption = boolean | { maxSize?: number };

/** Requests in one batch call unless `batch.maxSize` says otherwise. */
export const DEFAULT_BATCH_SIZE = 64;

/**
 * The most requests one call may carry: a batch runs in Redis as one script, during which the
 * server serves nothing else, so a call stays well under a millisecond.
 */
export const MAX_BATCH_SIZE = 1000;

/**
 * The largest batch, or `undefined` when batching is off.
 * @throws {@link SluiceConfigError} naming `batch` or `batch.maxSize`
 */
export function resolveBatch(value: unknown): number | undefined {
  if (value === undefined || value === true) return DEFAULT_BATCH_SIZE;
  if (value === false) return undefined;
  if (!isPlainObject(value) || Object.keys(value).some((name) => name !== 'maxSize')) {
    throw new SluiceConfigError('batch', value, 'expected true, false or { maxSize: number }');
  }
  const { maxSize = DEFAULT_BATCH_SIZE } = value as { maxSize?: unknown };
  if (typeof maxSize !== 'number' || !Number.isInteger(maxSize) || maxSize < 2 || maxSize > MAX_BATCH_SIZE) {
    throw new SluiceConfigError(
      'batch.maxSize',
      maxSize,
      `must be a whole number from 2 to ${MAX_BATCH_SIZE} (use batch: false to send each decision alone)`,
    );
  }
  return maxSize;
}
