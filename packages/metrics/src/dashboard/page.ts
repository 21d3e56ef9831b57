import { createHash } from 'node:crypto';
import { PAGE_SCRIPT } from './page-script';
import { PAGE_STYLE } from './page-style';

const hashOf = (text: string): string => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/**
 * The page: one HTML document with its style and script inline, nothing fetched from elsewhere
 * (many data centres reach no CDN). The CSP lets only these two inline blocks run, by hash,
 * and the page connect only to its own origin.
 */
export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<link rel="icon" href="data:,">
<title>sluice: limiters</title>
<style>${PAGE_STYLE}</style>
</head>
<body>
<header><h1>sluice</h1><span class="status">connecting...</span></header>
<main><p class="empty">No limiter has decided yet: give limiters this dashboard's metrics (the metrics option) and send some requests.</p></main>
<script>${PAGE_SCRIPT}</script>
</body>
</html>
`;

/** Headers of every dashboard response: never cached, never framed, nothing loaded from elsewhere. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': [
    "default-src 'none'",
    `script-src ${hashOf(PAGE_SCRIPT)}`,
    `style-src ${hashOf(PAGE_STYLE)}`,
    "connect-src 'self'",
    "img-src 'self' data:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; '),
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
};
