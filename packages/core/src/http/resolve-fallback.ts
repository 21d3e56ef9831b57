import { validateHeaderName, validateHeaderValue } from 'node:http';
import { SluiceConfigError } from '../policy/config-error';
import { wholeNumberIn } from './option-values';
import { JSON_TYPE, TEXT_TYPE } from './reply-body';

/** A resolved static fallback: its body already serialized. */
export interface ResolvedStaticFallback {
  readonly status: number;
  readonly type: string;
  readonly body: string;
  readonly headers: ReadonlyArray<readonly [string, string]>;
}

/** A limit's fallback: the user's handler, or a static reply; `undefined` for the default reply. */
export type ResolvedFallback<THandler> =
  { readonly handler: THandler } | { readonly reply: ResolvedStaticFallback } | undefined;

/**
 * The `fallback` option of both HTTP limits: a handler (the framework's, receiving the decision)
 * or a static reply `{ status?, body, headers?, type? }`, its headers checked as Node checks them
 * when sending, so a bad one fails at creation rather than as a 500.
 *
 * @throws {@link SluiceConfigError} naming `fallback` or the field at fault
 */
export function resolveFallback<THandler>(fallback: unknown): ResolvedFallback<THandler> {
  if (fallback === undefined) return undefined;
  if (typeof fallback === 'function') return { handler: fallback as THandler };
  const accepted =
    "expected { status?, body, headers?, type? } or a handler (the framework's, receiving the decision)";
  if (typeof fallback !== 'object' || fallback === null || Array.isArray(fallback) || !('body' in fallback)) {
    throw new SluiceConfigError('fallback', fallback, accepted);
  }
  const fields = fallback as Record<string, unknown>;
  for (const name of Object.keys(fields)) {
    if (!['status', 'body', 'headers', 'type'].includes(name))
      throw new SluiceConfigError(`fallback.${name}`, fields[name], `unknown field; ${accepted}`);
  }
  const { body } = fields;
  let text: string | undefined;
  try {
    text = typeof body === 'string' ? body : JSON.stringify(body);
  } catch {
    text = undefined;
  }
  if (text === undefined) throw new SluiceConfigError('fallback.body', body, 'must be text or a JSON value');
  const type = fields.type ?? (typeof body === 'string' ? TEXT_TYPE : JSON_TYPE);
  if (typeof type !== 'string' || type === '' || !isHeaderValue(type))
    throw new SluiceConfigError('fallback.type', type, 'must be a content type such as "text/html"');
  const headers = fields.headers ?? {};
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) {
    throw new SluiceConfigError(
      'fallback.headers',
      headers,
      'must be an object of header names to text values',
    );
  }
  // Checked here as Node checks them when sending, so a bad header fails at creation, not as a 500.
  for (const [name, value] of Object.entries(headers)) {
    if (!isHeaderName(name) || typeof value !== 'string' || !isHeaderValue(value)) {
      throw new SluiceConfigError(
        'fallback.headers',
        { [name]: value },
        'expected header names that are HTTP tokens, with text values free of CR, LF and other control characters',
      );
    }
  }
  return {
    reply: {
      status: wholeNumberIn('fallback.status', fields.status, 200, 200, 599),
      type,
      body: text,
      headers: Object.entries(headers as Record<string, string>),
    },
  };
}

function isHeaderName(name: string): boolean {
  try {
    validateHeaderName(name);
    return true;
  } catch {
    return false;
  }
}

function isHeaderValue(value: string): boolean {
  try {
    validateHeaderValue('x', value);
    return true;
  } catch {
    return false;
  }
}
