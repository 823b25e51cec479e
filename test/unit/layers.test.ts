import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { importViolations, layerOf, LAYERS, type ImportGraph } from '../support/layers.ts';

/**
 * The layer rule of the README's map: imports only go down
 * (functions -> routes/openapi -> http -> flows -> domain | db | mail | s3 -> schemas, errors),
 * lib/domain holds pure rules (no I/O, no SDK, no clock), and no module imports itself in a circle.
 */
const ROOT = join(import.meta.dirname, '..', '..');

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts'))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)));
}

/** Every module of lib/ and functions/ with what it imports (package aliases resolved to paths). */
function readGraph(): ImportGraph {
  const graph: ImportGraph = new Map();
  for (const file of [...sourceFiles('lib'), ...sourceFiles('functions')]) {
    const info = ts.preProcessFile(readFileSync(join(ROOT, file), 'utf8'), true, true);
    graph.set(
      file,
      info.importedFiles.map(({ fileName }) => fileName.replace(/^#(lib|functions|infra)\//, '$1/')),
    );
  }
  return graph;
}

const graph = readGraph();

describe('layers: imports go down only', () => {
  it('every module of lib/ and functions/ belongs to a layer', () => {
    const unplaced = [...graph.keys()].filter((file) => layerOf(file) === undefined);
    expect(unplaced).toEqual([]);
  });

  it('no import goes up, across a forbidden line, or in a circle', () => {
    expect(importViolations(graph)).toEqual([]);
  });

  it('lib/domain reads no clock: time is a parameter', () => {
    const clockReads = [...graph.keys()]
      .filter((file) => layerOf(file) === 'domain')
      .filter((file) => /Date\.now\(\)|new Date\(\s*\)/.test(readFileSync(join(ROOT, file), 'utf8')));
    expect(clockReads).toEqual([]);
  });

  // The check must be able to fail: each kind of violation, planted in a copy of the graph, is found.
  it.each([
    ['lib/db/tag.ts', 'lib/flows/order.ts', 'up'],
    ['lib/db/tag.ts', 'lib/domain/promo.ts', 'across'],
    ['lib/domain/promo.ts', '@aws-sdk/lib-dynamodb', 'I/O'],
    ['lib/domain/promo.ts', 'lib/config.ts', 'I/O'],
    ['lib/flows/order.ts', 'lib/http/handler.ts', 'up'],
    ['lib/schemas/tag.ts', 'lib/db/tag.ts', 'up'],
  ])('finds %s importing %s (%s)', (from, to) => {
    const planted: ImportGraph = new Map(graph);
    planted.set(from, [...(planted.get(from) ?? []), to]);
    expect(importViolations(planted).some((violation) => violation.startsWith(`${from} -> ${to}`))).toBe(true);
  });

  it('finds a cycle', () => {
    const planted: ImportGraph = new Map(graph);
    planted.set('lib/db/keys.ts', [...(planted.get('lib/db/keys.ts') ?? []), 'lib/db/tag.ts']);
    expect(importViolations(planted).some((violation) => violation.startsWith('cycle:'))).toBe(true);
  });

  it('names every layer it knows', () => {
    expect(Object.keys(LAYERS)).toContain('flows');
  });
});
