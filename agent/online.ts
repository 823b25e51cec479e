/**
 * Who is online, read from the game's answer to `--online-command` (pure: no I/O).
 *
 * The store hands out an `offline_execute: false` command only while its order's
 * `client_identifier` is in the claim's `online` list (extensions section 9), so a name wrongly
 * read as online would deliver to an absent player: whatever cannot be read means nobody.
 */
export type OnlineParser = { kind: 'minecraft' } | { kind: 'lines' } | { kind: 'pattern'; pattern: RegExp } | { kind: 'none' };

/** The claim's limits (extensions section 9): at most 5,000 players, each a client_identifier of at most 255 characters. */
export const ONLINE_MAX = 5000;
const NAME_MAX = 255;

/** Minecraft colour and format codes (§a, §l, ...), which some servers leave in the answer. */
const FORMAT_CODES = /§[0-9a-fk-orx]/gi;
/**
 * "There are 2 of a max of 20 players online: Steve, Alex" (1.13 and later; "max 20" on some
 * versions), "There are 2/20 players online:\nSteve, Alex" (1.12 and earlier).
 */
const MINECRAFT_LIST = /There are (\d+)\s*(?:\/\s*\d+|of a max(?: of)?\s+\d+) players online:?([\s\S]*)/i;

/** `--online-parser`: `minecraft`, `lines` (one name per line), `none` (nobody: the game is not asked), or `/regex/flags` (each match's first group, or the match). */
export function parseOnlineParser(value: string): OnlineParser | string {
  if (value === 'minecraft' || value === 'lines' || value === 'none') return { kind: value };
  const literal = /^\/(.+)\/([a-z]*)$/s.exec(value);
  if (!literal) return `--online-parser must be minecraft, lines, none or /regex/flags, not "${value}"`;
  try {
    const flags = literal[2]!.includes('g') ? literal[2]! : `${literal[2]}g`;
    return { kind: 'pattern', pattern: new RegExp(literal[1]!, flags) };
  } catch (error) {
    return `--online-parser: ${(error as Error).message}`;
  }
}

/**
 * The players an answer names. `complete` is false when the answer filled a whole RCON packet
 * and may go on: its last name may be cut ("Ale" of "Alex"), so it is left out.
 */
export function parseOnline(parser: OnlineParser, answer: string, complete = true): string[] {
  const names = readNames(parser, answer.replace(FORMAT_CODES, ''));
  if (!complete) names.pop();
  const unique = [...new Set(names.map((name) => name.trim()).filter((name) => name.length > 0 && name.length <= NAME_MAX))];
  return unique.slice(0, ONLINE_MAX);
}

function readNames(parser: OnlineParser, answer: string): string[] {
  switch (parser.kind) {
    case 'none':
      return [];
    case 'lines':
      return answer.split(/\r?\n/);
    case 'pattern':
      return [...answer.matchAll(parser.pattern)].map((match) => match[1] ?? match[0]);
    case 'minecraft': {
      const list = MINECRAFT_LIST.exec(answer);
      if (!list || list[1] === '0') return [];
      return list[2]!.split(/,|\r?\n/);
    }
  }
}
