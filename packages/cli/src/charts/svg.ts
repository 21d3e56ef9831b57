import { visible } from '../report/visible';

/**
 * Text for SVG or HTML: `&`, `<`, `>`, `"` and `'` escaped, and what XML 1.0 forbids (C0 controls,
 * lone surrogates, U+FFFE, U+FFFF) or a reader should not be handed (DEL, C1, bidi overrides)
 * written out as `\x1b`, `\u202e`, as the text report shows it: the file stays well-formed and
 * the key reads as it is. Log keys are untrusted input.
 */
export function escapeXml(text: string): string {
  return visible(text).replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

/** A coordinate with at most one decimal: small files, and the same text on every machine. */
export function coordinate(value: number): string {
  const rounded = Math.round(value * 10) / 10;
  return Object.is(rounded, -0) ? '0' : String(rounded);
}

/** The colours of the outcomes, by index of `OUTCOMES` (admitted, delayed, limited). */
export const OUTCOME_COLOURS = ['#4c9a5f', '#e3a33b', '#d2504f'] as const;

/** The font of every label. */
export const FONT = `font-family="system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif"`;

/** Cuts text longer than `max` characters with an ellipsis. */
export function clip(text: string, max: number): string {
  const chars = [...text];
  return chars.length > max ? `${chars.slice(0, max - 1).join('')}…` : text;
}
