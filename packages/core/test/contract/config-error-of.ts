import { SluiceConfigError } from '../../src';

/** The SluiceConfigError `fn` throws, to read its fields; anything else fails the test. */
export function errorOf(fn: () => unknown): SluiceConfigError {
  try {
    fn();
  } catch (e) {
    if (e instanceof SluiceConfigError) return e;
    throw e;
  }
  throw new Error('expected a SluiceConfigError');
}
