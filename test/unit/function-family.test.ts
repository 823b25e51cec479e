import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { functionNames } from '#lib/routes/index.ts';

/**
 * Every file of functions/ is an entry of the route table's family (a route, a scheduled job of
 * lib/routes/jobs.ts, a stream or queue consumer of lib/routes/consumers.ts), and every entry has
 * its file: a function wired by hand beside the table would get no derived grant, no local
 * wiring, no bundle and no test.
 */
const FUNCTIONS_DIR = join(import.meta.dirname, '..', '..', 'functions');

/** What breaks the rule: a file with no entry, an entry with no file. */
function familyViolations(files: readonly string[], names: readonly string[]): string[] {
  const entries = new Set(names);
  const handlers = new Set(files.filter((file) => file.endsWith('.ts')).map((file) => file.slice(0, -'.ts'.length)));
  return [
    ...[...handlers].filter((name) => !entries.has(name)).map((name) => `functions/${name}.ts is outside the route table's family`),
    ...[...entries].filter((name) => !handlers.has(name)).map((name) => `${name} has no functions/${name}.ts`),
    ...files.filter((file) => !file.endsWith('.ts')).map((file) => `functions/${file} is not a handler file`),
  ];
}

describe("functions/: the route table's family, no side door", () => {
  const files = readdirSync(FUNCTIONS_DIR);

  it('holds a file for every route, job and consumer, and nothing else', () => {
    expect(familyViolations(files, functionNames())).toEqual([]);
    expect(functionNames()).toEqual(expect.arrayContaining(['unpaid-orders-cancel', 'webhook-router', 'webhook-sender', 'order-create']));
  });

  // The check must be able to fail: each kind of violation, planted in a copy of the listing, is found.
  it('finds a handler file with no entry', () => {
    expect(familyViolations([...files, 'webhook-archiver.ts'], functionNames())).toEqual(["functions/webhook-archiver.ts is outside the route table's family"]);
  });

  it('finds an entry with no handler file', () => {
    expect(
      familyViolations(
        files.filter((file) => file !== 'webhook-sender.ts'),
        functionNames(),
      ),
    ).toEqual(['webhook-sender has no functions/webhook-sender.ts']);
  });

  it('finds a file that is no handler', () => {
    expect(familyViolations([...files, 'shared'], functionNames())).toEqual(['functions/shared is not a handler file']);
  });
});
