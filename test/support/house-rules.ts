import ts from 'typescript';

/**
 * The house rules of lib/db (issue 20, parts 2 and 3), as functions of one module's source so that
 * a test can plant a violation and see it found:
 *
 * - an entity name is written only in lib/schemas/entity.ts (`ENTITY.TAG`, never `'TAG'` nor a
 *   key prefix `` `TAG#...` ``);
 * - only lib/db/transact.ts builds a write command (PutCommand, UpdateCommand, DeleteCommand,
 *   TransactWriteCommand), and only it, lib/db/query.ts and lib/db/entity.ts name the table;
 * - only lib/db/query.ts loops over pages (`ExclusiveStartKey`).
 */
const parse = (file: string, source: string) => ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);

function visit(node: ts.Node, found: (node: ts.Node) => void): void {
  found(node);
  ts.forEachChild(node, (child) => visit(child, found));
}

const lineOf = (node: ts.Node) => node.getSourceFile().getLineAndCharacterOfPosition(node.getStart()).line + 1;

/**
 * The same words with another meaning: a promo's target types (`STORE`, `CATEGORY`) are API
 * vocabulary (the spec's), and a paid payment's role `ORDER` (the one that pays its order, beside
 * `DUPLICATE`) is a rule's answer, not the stored entities of those names.
 */
export const OTHER_MEANINGS: readonly { file: string; text: string }[] = [
  { file: 'lib/schemas/promo.ts', text: 'STORE' },
  { file: 'lib/schemas/promo.ts', text: 'CATEGORY' },
  { file: 'lib/domain/promo.ts', text: 'STORE' },
  { file: 'lib/domain/pricing-promos.ts', text: 'STORE' },
  { file: 'lib/domain/pricing-promos.ts', text: 'CATEGORY' },
  { file: 'lib/routes/promo.ts', text: 'STORE' },
  { file: 'infra/local/seed.ts', text: 'STORE' },
  // How a paid payment stands to its order (`order_role`: ORDER, DUPLICATE, UNFULFILLED), not the stored order.
  { file: 'lib/domain/payment.ts', text: 'ORDER' },
  { file: 'lib/schemas/payment.ts', text: 'ORDER' },
];

/** String literals (and the literal heads of templates) that are an entity name or start with `<name>#`. */
export function entityLiteralViolations(file: string, source: string, names: readonly string[]): string[] {
  const violations: string[] = [];
  const isEntityText = (text: string) => names.some((name) => text === name || text.startsWith(`${name}#`));
  visit(parse(file, source), (node) => {
    const text = ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateHead(node) ? node.text : undefined;
    if (text === undefined || !isEntityText(text)) return;
    // An import path or a property named like an entity is not a name written.
    if (ts.isImportDeclaration(node.parent) || ts.isExportDeclaration(node.parent)) return;
    if (OTHER_MEANINGS.some((other) => other.file === file && other.text === text)) return;
    violations.push(`${file}:${lineOf(node)} writes the entity name ${JSON.stringify(text)}`);
  });
  return violations;
}

const WRITE_COMMANDS = new Set(['PutCommand', 'UpdateCommand', 'DeleteCommand', 'TransactWriteCommand']);

/** A write command built outside the write helper. */
export function rawWriteViolations(file: string, source: string): string[] {
  const violations: string[] = [];
  visit(parse(file, source), (node) => {
    if (ts.isNewExpression(node) && WRITE_COMMANDS.has(node.expression.getText())) {
      violations.push(`${file}:${lineOf(node)} builds a ${node.expression.getText()} (write through lib/db/transact.ts)`);
    }
  });
  return violations;
}

/** The table named outside the helpers that carry it (writes, pages, single reads). */
export function tableNameViolations(file: string, source: string): string[] {
  const violations: string[] = [];
  visit(parse(file, source), (node) => {
    if ((ts.isPropertyAssignment(node) || ts.isShorthandPropertyAssignment(node)) && node.name.getText() === 'TableName') {
      violations.push(`${file}:${lineOf(node)} names the table (the builders of lib/db/transact.ts, lib/db/query.ts and lib/db/entity.ts carry it)`);
    }
  });
  return violations;
}

/** A loop over a Query's pages of its own. */
export function pagingLoopViolations(file: string, source: string): string[] {
  const violations: string[] = [];
  visit(parse(file, source), (node) => {
    if ((ts.isPropertyAssignment(node) || ts.isShorthandPropertyAssignment(node) || ts.isPropertyAccessExpression(node)) && node.name.getText() === 'ExclusiveStartKey') {
      violations.push(`${file}:${lineOf(node)} pages by hand (use queryPages of lib/db/query.ts)`);
    }
  });
  return violations;
}
