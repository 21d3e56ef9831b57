import type { HttpRequest } from '@sluice/core/adapter';
import { requestTarget } from './combined-format';

/** A JSON or CSV log line: field name → value. */
export type LogRecord = Readonly<Record<string, unknown>>;

/** Fields tried for the time, in order, when `--time-field` is not given. */
export const TIME_FIELDS = [
  'time',
  'timestamp',
  '@timestamp',
  'ts',
  'time_iso8601',
  'time_local',
  'msec',
  'date',
];
/** Fields tried for the client address (`$remote_addr`). */
const ADDRESS_FIELDS = ['remote_addr', 'client_ip', 'ip'];

/**
 * The request a JSON or CSV record describes, for the key templates. Fields are named after
 * nginx's variables, as an nginx `log_format … escape=json` writes them:
 *
 * - `$remote_addr`: `remote_addr` (or `client_ip`, `ip`);
 * - `$uri`, `$arg_<name>`: `request_uri`, else `uri` + `args`, else the target of `request`
 *   (`GET /sku?id=1 HTTP/1.1`), else `url` or `path`;
 * - `$http_<name>`: the field `http_<name>` (`http_user_id` is header `user-id`), so
 *   `$cookie_<name>` reads `http_cookie`, and `$server_name` reads `http_host` (or `server_name`, `host`).
 *
 * @param record - the parsed line
 */
export function recordRequest(record: LogRecord): HttpRequest {
  const headers: Record<string, string> = {};
  for (const name of Object.keys(record)) {
    if (name.startsWith('http_')) {
      const value = text(record[name]);
      if (value !== '') headers[name.slice(5).replaceAll('_', '-')] = value;
    }
  }
  if (headers.host === undefined) {
    const host = text(record.server_name) || text(record.host);
    if (host !== '') headers.host = host;
  }
  return { remoteAddress: first(record, ADDRESS_FIELDS), url: recordUrl(record), headers };
}

function recordUrl(record: LogRecord): string {
  const requestUri = text(record.request_uri);
  if (requestUri !== '') return requestUri;
  const uri = text(record.uri);
  if (uri !== '') {
    const args = text(record.args);
    return args === '' ? uri : `${uri}?${args}`;
  }
  const request = text(record.request);
  if (request !== '') return requestTarget(request);
  return text(record.url) || text(record.path);
}

function first(record: LogRecord, names: readonly string[]): string | undefined {
  for (const name of names) {
    const value = text(record[name]);
    if (value !== '') return value;
  }
  return undefined;
}

/** A field as text: strings as they are, numbers and booleans written out, `-` (nginx's empty) and anything else as `''`. */
export function text(value: unknown): string {
  if (typeof value === 'string') return value === '-' ? '' : value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return '';
}
