import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT, readImportGraph, type ImportGraph } from '#infra/local/import-graph.ts';
import { importViolations, layerOf, LAYERS } from '../support/layers.ts';

/**
 * The layer rule of docs/contributing.md: imports only go down
 * (functions -> routes/openapi -> http -> flows -> domain | db | mail | s3 -> schemas, errors),
 * lib/domain holds pure rules (no I/O, no SDK, no clock), and no module imports itself in a circle.
 */
const ROOT = PROJECT_ROOT;

const graph = readImportGraph();

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
