/**
 * What a terminal or a markup parser would act on rather than show: C0 controls (ESC starts the
 * sequences that clear the screen or set the title), DEL, C1 controls (U+009B is a one-character
 * CSI), the bidi overrides and isolates (U+202A–U+202E, U+2066–U+2069, which reorder the text
 * around them), lone surrogates and the noncharacters U+FFFE, U+FFFF (which XML 1.0 forbids, as
 * it forbids every C0 control but tab, LF and CR). With the `u` flag a surrogate pair is one code
 * point, so the surrogate range matches only a lone one.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNSHOWABLE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\ud800-\udfff\ufffe\uffff]/gu;

/**
 * Text from a log as it can be shown: every character a terminal or an XML parser would act on
 * is written as its escape, one for one — `\x1b` below U+0100, `\u202e` above, as
 * `JSON.stringify` writes them — and everything else, non-ASCII letters included, is left as it
 * is. Log keys, file names and unreadable lines are untrusted input.
 *
 * @example visible('\u001b[2Jhi') === '\\x1b[2Jhi'
 */
export function visible(text: string): string {
  return text.replace(UNSHOWABLE, (char) => {
    const code = char.charCodeAt(0);
    return code < 0x100
      ? `\\x${code.toString(16).padStart(2, '0')}`
      : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}
