import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ENTITIES } from '#lib/schemas/entity.ts';
import { entityLiteralViolations, pagingLoopViolations, rawWriteViolations, tableNameViolations } from '../support/house-rules.ts';

/**
 * One definition per stored entity, one way to write, one way to page (issue 20): the rules of
 * test/support/house-rules.ts over every module of lib/, functions/ and infra/.
 */
const ROOT = join(import.meta.dirname, '..', '..');

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts'))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)));
}

const files = [...sourceFiles('lib'), ...sourceFiles('functions'), ...sourceFiles('infra')];
const dbFiles = files.filter((file) => file.startsWith('lib/db/'));
const source = (file: string) => readFileSync(join(ROOT, file), 'utf8');

describe('lib/db house rules', () => {
  it('every stored entity name is written once, in lib/schemas/entity.ts', () => {
    const violations = files.filter((file) => file !== 'lib/schemas/entity.ts').flatMap((file) => entityLiteralViolations(file, source(file), ENTITIES));
    expect(violations).toEqual([]);
    // Parses every file of lib/, functions/ and infra/ with the TypeScript compiler: seconds on a loaded machine.
  }, 60_000);

  it('only lib/db/transact.ts builds a write command', () => {
    expect(dbFiles.filter((file) => file !== 'lib/db/transact.ts').flatMap((file) => rawWriteViolations(file, source(file)))).toEqual([]);
  });

  it('only the write, paging and single-read helpers name the table', () => {
    // lib/db/table.ts creates the table (DynamoDB Local).
    const helpers = ['lib/db/transact.ts', 'lib/db/query.ts', 'lib/db/entity.ts', 'lib/db/table.ts'];
    expect(files.filter((file) => file.startsWith('lib/') && !helpers.includes(file)).flatMap((file) => tableNameViolations(file, source(file)))).toEqual([]);
  });

  it('only lib/db/query.ts loops over pages', () => {
    expect(files.filter((file) => file.startsWith('lib/') && file !== 'lib/db/query.ts').flatMap((file) => pagingLoopViolations(file, source(file)))).toEqual([]);
  });

  // Each rule must be able to fail: a violation planted in a module's source is found.
  it.each([
    ['an inline entity name', "const item = { entity: 'TAG' };"],
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the planted source is TypeScript text with a template in it
    ['a key prefix', 'const sk = `TAG#${id}`;'],
    ['a string key prefix', "const prefix = 'WEBHOOK_EVENT#';"],
    ['a name in a type', "type Kind = 'PACKAGE' | 'CATEGORY';"],
  ])('finds %s', (_, planted) => {
    expect(entityLiteralViolations('lib/db/tag.ts', planted, ENTITIES)).toHaveLength(planted.includes('CATEGORY') ? 2 : 1);
  });

  it('leaves the constant, other words and a promo target type alone', () => {
    expect(entityLiteralViolations('lib/db/tag.ts', "const a = ENTITY.TAG; const b = 'TAGS'; const c = 'tag';", ENTITIES)).toEqual([]);
    expect(entityLiteralViolations('lib/schemas/promo.ts', "const TARGET_TYPES = ['STORE', 'CATEGORY', 'PRODUCT'];", ENTITIES)).toEqual([]);
    expect(entityLiteralViolations('lib/db/promo.ts', "const TARGET = 'STORE';", ENTITIES)).toHaveLength(1);
  });

  it.each(['PutCommand', 'UpdateCommand', 'DeleteCommand', 'TransactWriteCommand'])('finds a %s built', (command) => {
    expect(rawWriteViolations('lib/db/tag.ts', `await db.send(new ${command}({ Key: key }));`)).toHaveLength(1);
    expect(rawWriteViolations('lib/db/tag.ts', 'await db.send(new GetCommand({ Key: key }));')).toEqual([]);
  });

  it('finds the table named', () => {
    expect(tableNameViolations('lib/db/tag.ts', 'const item = { Put: { TableName: TABLE, Item: item } };')).toHaveLength(1);
    expect(tableNameViolations('lib/db/tag.ts', 'const input = { TableName };')).toHaveLength(1);
  });

  it('finds a paging loop', () => {
    const loop = 'do { const page = await db.send(new QueryCommand({ ...input, ExclusiveStartKey: startKey })); startKey = page.LastEvaluatedKey; } while (startKey);';
    expect(pagingLoopViolations('lib/db/tag.ts', loop)).toHaveLength(1);
    expect(pagingLoopViolations('lib/db/tag.ts', 'for await (const page of queryPages(input)) items.push(...page.Items);')).toEqual([]);
  });
});
