import type { HttpRequest } from '@sluice/core/adapter';

/** One line of the combined log format, as far as keys and times need it. */
export interface CombinedLine {
  /** `[10/Oct/2000:13:55:36 -0700]` without its brackets. */
  readonly time: string;
  /** The request as the key templates read it. */
  readonly request: HttpRequest;
}

/**
 * A quoted field, `\` escaping the next character. Written as the unrolled loop
 * `[^"\\]*(?:\\.[^"\\]*)*` rather than `(?:[^"\\]|\\.)*`: Irregexp keeps a backtrack entry per
 * iteration of a loop with a choice in it, and the second form overflowed its stack on a 10 M
 * character user agent. The first iterates once per escape (half a million at most in a line of
 * `MAX_LINE_BYTES`, well within the stack) and its runs of plain text take no stack at all.
 */
const QUOTED = '"([^"\\\\]*(?:\\\\.[^"\\\\]*)*)"';
/**
 * nginx `combined` / Apache `%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-agent}i"`, and the
 * common format without the last two; anything after them (nginx's `main` adds
 * `"$http_x_forwarded_for"`, others a request time) is allowed, and a third quoted field is read
 * as `X-Forwarded-For`. Quotes inside a field are escaped (`\"` by Apache, `\x22` by nginx).
 */
const COMBINED = new RegExp(
  `^(\\S+) \\S+ \\S+ \\[([^\\]]+)\\] ${QUOTED} (?:\\d{3}|-) (?:\\d+|-)(?: ${QUOTED} ${QUOTED}(?: ${QUOTED})?)?(?:\\s|$)`,
);

/**
 * Parses one combined-format line into its time and a request: `$remote_addr` is the client
 * field, `$uri` and `$arg_<name>` come from the request line's target, `$http_user_agent`,
 * `$http_referer` and `$http_x_forwarded_for` from their fields (`-` is no value, as nginx
 * writes an empty one).
 *
 * @param line - one log line
 * @returns the parsed line, or `undefined` when it is not in the combined (or common) format
 */
export function parseCombinedLine(line: string): CombinedLine | undefined {
  const match = COMBINED.exec(line);
  if (match === null) return undefined;
  const [, address, time, requestLine, referer, userAgent, forwardedFor] = match as unknown as Array<
    string | undefined
  >;
  const headers: Record<string, string> = {};
  if (referer !== undefined && referer !== '-') headers.referer = unescapeField(referer);
  if (userAgent !== undefined && userAgent !== '-') headers['user-agent'] = unescapeField(userAgent);
  if (forwardedFor !== undefined && forwardedFor !== '-')
    headers['x-forwarded-for'] = unescapeField(forwardedFor);
  return {
    time: time as string,
    request: { remoteAddress: address, url: requestTarget(requestLine as string), headers },
  };
}

/**
 * The target of a request line (`GET /sku?id=1 HTTP/1.1` → `/sku?id=1`); a line that is not a
 * request (`-`, a TLS handshake sent to the HTTP port) has none, `''`.
 */
export function requestTarget(requestLine: string): string {
  const first = requestLine.indexOf(' ');
  if (first < 0) return '';
  const last = requestLine.lastIndexOf(' ');
  return unescapeField(last > first ? requestLine.slice(first + 1, last) : requestLine.slice(first + 1));
}

/** nginx writes `"` and bytes outside ASCII as `\xHH`, Apache as `\"` and `\xHH`: read them back. */
function unescapeField(text: string): string {
  if (!text.includes('\\')) return text;
  return text.replace(/\\x([0-9a-fA-F]{2})|\\(.)/g, (_, hex: string | undefined, char: string | undefined) =>
    hex === undefined ? (char as string) : String.fromCharCode(parseInt(hex, 16)),
  );
}
