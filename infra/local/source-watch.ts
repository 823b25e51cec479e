import { existsSync, readdirSync, statSync, watch, type FSWatcher } from 'node:fs';
import { join, sep } from 'node:path';

/**
 * Calls `onChange` on every change below `roots`, however the file was written: `npm start`'s
 * reload (infra/local/server.ts).
 *
 * Every directory is watched on its own, never a file and never with `recursive: true`: Node 20's
 * recursive `fs.watch` on Linux follows each file's inode, so a file replaced by a rename (`sed -i`,
 * `git checkout`, an editor's rename-save) is a new inode it never hears of again, and the file's
 * later edits were never reloaded. A directory's watch reports each entry written, created,
 * renamed over or removed in it, whatever inode the entry has now. A directory that appears (or is
 * replaced, as `git checkout` may do) is watched from then on; one that goes is let go. No
 * dependency: the few lines below are what a watcher library would do here (chokidar adds a package
 * and its options for a tree of a few hundred files under two roots).
 */
export function watchSourceTrees(roots: readonly string[], onChange: () => void): () => void {
  const watchers = new Map<string, FSWatcher>();

  const unwatch = (dir: string) => {
    for (const [path, watcher] of watchers) {
      if (path !== dir && !path.startsWith(dir + sep)) continue;
      watcher.close();
      watchers.delete(path);
    }
  };

  const isDirectory = (path: string) => {
    try {
      return statSync(path).isDirectory();
    } catch {
      return false;
    }
  };

  const add = (dir: string) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
      const watcher = watch(dir, (event, name) => {
        if (!existsSync(dir)) {
          unwatch(dir);
        } else if (name && event === 'rename') {
          // A directory created, renamed in or replaced: watch it (again: a replaced one is a new inode).
          const path = join(dir, name);
          unwatch(path);
          if (isDirectory(path)) add(path);
        }
        onChange();
      });
      watcher.on('error', () => unwatch(dir));
      watchers.set(dir, watcher);
    } catch {
      // Gone between the listing and the watch: nothing to watch.
      return;
    }
    for (const entry of entries) if (entry.isDirectory()) add(join(dir, entry.name));
  };

  for (const root of roots) add(root);
  return () => {
    for (const watcher of watchers.values()) watcher.close();
    watchers.clear();
  };
}
