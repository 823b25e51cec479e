import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

/** Module path (`lib/db/tag.ts`) -> what it imports: project paths with the `#lib/` aliases resolved, packages as written. */
export type ImportGraph = Map<string, string[]>;

export const PROJECT_ROOT = join(import.meta.dirname, '..', '..');

/** The TypeScript sources under `dir` (a project-relative folder), as project-relative paths. */
export function sourceFiles(dir: string, root = PROJECT_ROOT): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts'))
    .map((entry) => relative(root, join(entry.parentPath, entry.name)))
    .sort();
}

/**
 * Every module of lib/ and functions/ with its imports, read with the TypeScript parser (no type
 * check, so it takes a second): the layer test judges it, the route dossier (docs/routes.md) walks it.
 */
export function readImportGraph(root = PROJECT_ROOT): ImportGraph {
  const graph: ImportGraph = new Map();
  for (const file of [...sourceFiles('lib', root), ...sourceFiles('functions', root)]) {
    const info = ts.preProcessFile(readFileSync(join(root, file), 'utf8'), true, true);
    graph.set(
      file,
      info.importedFiles.map(({ fileName }) => fileName.replace(/^#(lib|functions|infra)\//, '$1/')),
    );
  }
  return graph;
}
