import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { docCommentViolations } from '../support/doc-comments.ts';

/* Every doc comment documents the declaration under it: none stacked, none orphaned (test/support/doc-comments.ts). */
const ROOT = join(import.meta.dirname, '..', '..');
const FOLDERS = ['lib', 'functions', 'infra', 'test', 'examples', 'agent'];

function sourceFiles(): string[] {
  return FOLDERS.flatMap((folder) =>
    readdirSync(join(ROOT, folder), { withFileTypes: true, recursive: true })
      .filter((entry) => entry.isFile() && /\.m?ts$/.test(entry.name) && !entry.name.endsWith('.d.ts'))
      .map((entry) => relative(ROOT, join(entry.parentPath, entry.name))),
  );
}

describe('doc comments', () => {
  // Parsing every source takes a few seconds on a loaded machine: hence the longer timeout.
  it('each documents the declaration under it: none stacked, none orphaned', () => {
    const files = sourceFiles();
    expect(files.length).toBeGreaterThan(300);
    const violations = files
      .filter((file) => !file.includes('node_modules'))
      .flatMap((file) => docCommentViolations(file, readFileSync(join(ROOT, file), 'utf8')))
      .map(({ file, line, kind, followedBy }) => `${file}:${line} ${kind}: followed by ${followedBy}`);
    expect(violations).toEqual([]);
  }, 30_000);

  // The rule must be able to fail: each kind of violation, planted in a small source, is found at its line.
  it.each([
    ['stacked: an older text left above its replacement', '/** Old. */\n/** New. */\nexport const a = 1;\n', [1], 'stacked', 'another doc comment'],
    ['stacked: three generations', 'const x = 0;\n/** One. */\n/** Two. */\n/**\n * Three.\n */\nexport type T = 1;\n', [2, 3], 'stacked', 'another doc comment'],
    ['orphaned above an import', '/** What this module is. */\nimport { a } from "./a.ts";\nexport const b = a;\n', [1], 'orphaned', 'an import'],
    ['orphaned above a plain comment', '/** Documents nothing. */\n// a note\nexport const a = 1;\n', [1], 'orphaned', 'a plain comment'],
    ['orphaned at the end of a block', 'export class A {\n  f() {}\n  /** Left over. */\n}\n', [3], 'orphaned', 'a closing brace'],
    ['orphaned at the end of the file', 'export const a = 1;\n/** Left over. */\n', [2], 'orphaned', 'the end of the file'],
    ['stacked inside an object literal', 'export const o = {\n  /** Old. */\n  /** New. */\n  a: 1,\n};\n', [2], 'stacked', 'another doc comment'],
  ])('finds a doc comment %s', (_, source, lines, kind, followedBy) => {
    expect(docCommentViolations('planted.ts', source)).toEqual(lines.map((line) => ({ file: 'planted.ts', line, kind, followedBy })));
  });

  it.each([
    ['a doc comment on a declaration', '/** A. */\nexport const a = 1;\n'],
    ['a plain module header above a documented declaration', '/*\n * The module.\n */\n\n/** A. */\nexport const a = 1;\n'],
    ['a tool directive between a doc comment and its declaration', '/** A. */\n// biome-ignore lint/style/useConst: measured\nexport let a = 1;\n'],
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the planted source holds a template literal on purpose
    ['doc comments inside template literals and strings', 'export const s = `/** ${1} */`;\nexport const t = "/** */";\n'],
    ['a dynamic import', '/** Loads it. */\nimport("./a.ts");\n'],
    ['a documented property, member and parameter', 'export interface I {\n  /** A. */\n  a: number;\n}\nexport function f(/** The x. */ x: number) { return x; }\n'],
  ])('accepts %s', (_, source) => {
    expect(docCommentViolations('planted.ts', source)).toEqual([]);
  });
});
