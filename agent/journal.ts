import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { AckResult } from './api.ts';

/**
 * Results that ran on the game but are not acked yet, kept in `--state-file` so that a crash, a
 * kill or a reboot while the API is down loses none: the next start acks them first. Section 9
 * accepts an ack after its lease lapsed as long as nobody claimed the command again.
 */
export interface PendingResult {
  lease_id: string;
  result: AckResult;
}

export interface Journal {
  load(): PendingResult[];
  save(pending: PendingResult[]): void;
}

export const noJournal: Journal = { load: () => [], save: () => {} };

export function fileJournal(path: string): Journal {
  return {
    load() {
      let text: string;
      try {
        text = readFileSync(path, 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
        throw error;
      }
      const saved = JSON.parse(text) as { pending?: PendingResult[] };
      return Array.isArray(saved.pending) ? saved.pending : [];
    },
    save(pending) {
      // Written aside and renamed: a crash mid-write leaves the previous file whole.
      const temporary = `${path}.tmp`;
      writeFileSync(temporary, JSON.stringify({ pending }), { mode: 0o600 });
      renameSync(temporary, path);
    },
  };
}
