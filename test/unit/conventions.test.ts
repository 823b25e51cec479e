import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Conventions a tool checks beyond tsc. One way to read the time: lib/clock.ts (`currentTimeMs`/`nowIso`, which the local stack may pin
 * for a request, or `wallClockMs` for what times the process itself), imported by one path. A
 * `Date.now()` elsewhere is a time no test can pin and a rule that silently ignores x-local-now.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const CLOCK = 'lib/clock.ts';

const sources = (dir: string) =>
  readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)));

/** Every clock read or clock import that bypasses the one module, as `file: what`. */
function clockViolations(files: ReadonlyMap<string, string>): string[] {
  return [...files].flatMap(([file, text]) => {
    if (file === CLOCK) return [];
    const found: string[] = [];
    if (/Date\.now\(\)|new Date\(\s*\)/.test(text)) found.push(`${file}: reads the clock itself`);
    const clockImports = [...text.matchAll(/from '([^']*clock(?:\.ts)?)'/g)].map((match) => match[1]);
    for (const path of clockImports) if (path !== '#lib/clock.ts') found.push(`${file}: imports the clock as ${path}`);
    return found;
  });
}

const tree = new Map([...sources('lib'), ...sources('functions')].map((file) => [file, readFileSync(join(ROOT, file), 'utf8')]));

describe('the clock: one module, one import path', () => {
  it('no module of lib/ or functions/ reads the time but through #lib/clock.ts', () => {
    expect(clockViolations(tree)).toEqual([]);
  });

  // The check must be able to fail: each kind of violation, planted in a copy of the tree, is found.
  it.each([
    ['lib/flows/order.ts', 'const now = Date.now();', 'reads the clock itself'],
    ['lib/flows/order.ts', 'const now = new Date();', 'reads the clock itself'],
    ['functions/order-create.ts', "import { nowIso } from '../lib/clock.ts';", 'imports the clock as ../lib/clock.ts'],
  ])('finds %s with `%s`', (file, line, why) => {
    const planted = new Map(tree);
    planted.set(file, `${planted.get(file)}\n${line}\n`);
    expect(clockViolations(planted)).toEqual([`${file}: ${why}`]);
  });
});

/**
 * Error codes are one union (lib/errors.ts `ErrorCode`): tsc refuses a throw site whose code is not
 * in it; this refuses a code in it that no throw site uses, so the list clients read stays true.
 */
const ERRORS = 'lib/errors.ts';
const codesOf = (errorsSource: string) => [...(/export type ErrorCode =([^;]*);/.exec(errorsSource)?.[1] ?? '').matchAll(/'([A-Z_]+)'/g)].map((match) => match[1]!);

function unusedCodes(files: ReadonlyMap<string, string>): string[] {
  const codes = codesOf(files.get(ERRORS) ?? '');
  const elsewhere = [...files].map(([file, text]) => (file === ERRORS ? text.replace(/export type ErrorCode =[^;]*;/, '') : text)).join('\n');
  return codes.filter((code) => !elsewhere.includes(`'${code}'`));
}

describe('error codes: one union, every code thrown somewhere', () => {
  const withInfra = new Map([...tree, ...sources('infra').map((file) => [file, readFileSync(join(ROOT, file), 'utf8')] as const)]);

  it('lists codes only', () => {
    expect(codesOf(withInfra.get(ERRORS)!).length).toBeGreaterThan(30);
    expect(unusedCodes(withInfra)).toEqual([]);
  });

  it('finds a code listed and never thrown', () => {
    const planted = new Map(withInfra);
    planted.set(ERRORS, withInfra.get(ERRORS)!.replace("  | 'NOT_FOUND'", "  | 'NOT_FOUND'\n  | 'NEVER_THROWN'"));
    expect(unusedCodes(planted)).toEqual(['NEVER_THROWN']);
  });
});
