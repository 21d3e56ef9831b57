import { brokenLinks, slugOf } from './docs/links';
import { docFiles, parseMarkdown, type CodeBlock } from './docs/markdown';
import { typeCheckBlocks } from './docs/type-check';

/**
 * The documentation users read (README.md, docs/**, packages/*\/README.md) as they read it: every
 * `ts` block type-checks as written, in a strict project against the current sources, and every
 * relative link leads to a file and, with `#anchor`, to a heading of it.
 *
 * A block that needs setup a reader can take for granted (the `app` of the page's first example,
 * the `sku` handler) gets it from a prelude, in an HTML comment right above the block, which
 * readers never see:
 *
 *     <!-- docs-test: prelude
 *     import express from 'express';
 *     declare const app: express.Express;
 *     -->
 *
 * A block that cannot be checked says why the same way, as rarely as possible:
 * `<!-- docs-test: skip <the reason> -->`.
 */
const FILES = docFiles();
const TS_BLOCKS: CodeBlock[] = FILES.flatMap((file) => parseMarkdown(file).blocks).filter((block) =>
  ['ts', 'typescript'].includes(block.lang),
);

test('the documentation has TypeScript examples to check', () => {
  expect(FILES).toEqual(expect.arrayContaining(['README.md', 'packages/core/README.md']));
  expect(TS_BLOCKS.length).toBeGreaterThan(20);
});

test('every TypeScript example type-checks as written', () => {
  expect(typeCheckBlocks(TS_BLOCKS)).toEqual([]);
});

test('a block is skipped only with a reason', () => {
  const unexplained = TS_BLOCKS.filter((b) => b.directive?.kind === 'skip' && b.directive.text === '');
  expect(unexplained.map((b) => `${b.file}:${b.line}`)).toEqual([]);
});

test('every relative link leads to a file, and every #anchor to a heading', () => {
  expect(FILES.flatMap((file) => brokenLinks(file))).toEqual([]);
});

describe('the checks themselves', () => {
  test('an example with a type error is reported at its line in the Markdown', () => {
    const block: CodeBlock = {
      file: 'README.md',
      lang: 'ts',
      line: 40,
      code: "import { createLimiter } from '@sluice/core';\ncreateLimiter({ rate: '10r/s', brust: 2 });",
    };
    const [error, ...more] = typeCheckBlocks([block]);
    expect(more).toEqual([]);
    expect(error).toMatch(/^README\.md:41:\d+ TS\d+ .*'brust'/);
  });

  test('a prelude is type-checked before its block', () => {
    const prelude = {
      kind: 'prelude' as const,
      text: "import { createLimiter } from '@sluice/core';",
      line: 37,
    };
    const code =
      "export const decision: Promise<{ allowed: boolean }> = createLimiter({ rate: '10r/s' }).consume('k');";
    expect(typeCheckBlocks([{ file: 'README.md', lang: 'ts', line: 40, code, directive: prelude }])).toEqual(
      [],
    );
    expect(typeCheckBlocks([{ file: 'README.md', lang: 'ts', line: 40, code }])).toEqual([
      expect.stringMatching(/^README\.md:40:\d+ TS2304 Cannot find name 'createLimiter'/),
    ]);
  });

  test('a link to a missing file or heading is reported; code and external links are not followed', () => {
    const page = [
      '# Rate limits',
      '## Rate limits',
      'See [the top](#rate-limits), [again](#rate-limits-1), [gone](#nowhere), [core](packages/core/README.md),',
      '[its keys](packages/core/README.md#no-such-heading), [none](docs/none.md), [web](https://example.com/x.md).',
      '`[not a link](nowhere.md)`',
      '```md',
      '[in code](nowhere.md)',
      '```',
    ].join('\n');
    expect(brokenLinks('README.md', page)).toEqual([
      'README.md:3 #nowhere: README.md has no heading #nowhere',
      'README.md:4 packages/core/README.md#no-such-heading: packages/core/README.md has no heading #no-such-heading',
      'README.md:4 docs/none.md: no file docs/none.md',
    ]);
  });

  test('anchors are named as GitHub names headings', () => {
    expect(slugOf('Redis: `RedisStore` and Cluster')).toBe('redis-redisstore-and-cluster');
    expect(slugOf('Keys ($binary_remote_addr, …)')).toBe('keys-binary_remote_addr-');
    expect(slugOf('[Fastify](https://fastify.dev) plugin')).toBe('fastify-plugin');
  });
});
