import { describe, expect, it } from 'vitest';
import { parseOnline, parseOnlineParser, type OnlineParser } from '../../agent/online.ts';

/** Who the delivery agent reports online, read from the game's answer (agent/online.ts). */
const minecraft: OnlineParser = { kind: 'minecraft' };

describe("reading who is online from the game's answer", () => {
  it("reads Minecraft's list, today's and 1.12's wording, without colour codes", () => {
    expect(parseOnline(minecraft, 'There are 2 of a max of 20 players online: Steve, Alex')).toEqual(['Steve', 'Alex']);
    expect(parseOnline(minecraft, 'There are 1 of a max 20 players online: Notch')).toEqual(['Notch']);
    expect(parseOnline(minecraft, 'There are 2/20 players online:\nSteve, Alex')).toEqual(['Steve', 'Alex']);
    expect(parseOnline(minecraft, '§6There are §c2§6 of a max of §c20§6 players online: §fSteve§6, §fAlex')).toEqual(['Steve', 'Alex']);
  });

  it('reads nobody from an empty server, and nobody from an answer it cannot read', () => {
    expect(parseOnline(minecraft, 'There are 0 of a max of 20 players online: ')).toEqual([]);
    expect(parseOnline(minecraft, 'There are 0 of a max of 20 players online:')).toEqual([]);
    expect(parseOnline(minecraft, 'Unknown command. Type "/help" for help.')).toEqual([]);
    expect(parseOnline(minecraft, '')).toEqual([]);
  });

  it('leaves out the last name of an answer that filled a whole packet: it may be cut', () => {
    expect(parseOnline(minecraft, 'There are 3 of a max of 500 players online: Steve, Alex, Ale', false)).toEqual(['Steve', 'Alex']);
  });

  it('drops repeats and names longer than a client_identifier (255), and keeps at most 5,000', () => {
    const many = Array.from({ length: 5001 }, (_, index) => `p${index}`);
    expect(parseOnline(minecraft, `There are 3 of a max of 9 players online: Steve, Steve, ${'x'.repeat(256)}`)).toEqual(['Steve']);
    expect(parseOnline({ kind: 'lines' }, many.join('\n'))).toHaveLength(5000);
  });

  it('reads one name per line, or the first group of a pattern, or nobody with none', () => {
    expect(parseOnline({ kind: 'lines' }, 'Steve\r\nAlex\n\n')).toEqual(['Steve', 'Alex']);
    const status = parseOnlineParser('/^#\\s+\\d+\\s+\\d+\\s+"(.+?)"/m');
    expect(parseOnline(status as OnlineParser, '# userid name\n#  2 1 "Gordon" STEAM_1:0:1\n#  3 1 "Alyx" STEAM_1:0:2\n')).toEqual(['Gordon', 'Alyx']);
    expect(parseOnline({ kind: 'none' }, 'There are 1 of a max of 20 players online: Steve')).toEqual([]);
  });

  it('names a bad --online-parser', () => {
    expect(parseOnlineParser('minecraft')).toEqual({ kind: 'minecraft' });
    expect(parseOnlineParser('csv')).toBe('--online-parser must be minecraft, lines, none or /regex/flags, not "csv"');
    expect(parseOnlineParser('/(/')).toMatch(/^--online-parser: Invalid regular expression/);
  });
});
