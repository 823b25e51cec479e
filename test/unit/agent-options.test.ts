import { describe, expect, it } from 'vitest';
import { cut } from '../../agent/agent.ts';
import { Backoff, jitter } from '../../agent/backoff.ts';
import { parseOptions, UsageError } from '../../agent/options.ts';

/** The delivery agent's command line (extensions section 14), its backoff and its cut of answers. */
const env = { STORE_API_KEY: 'sak_key', RCON_PASSWORD: 'pw' };
const base = ['--api', 'https://api.example.com/v1/', '--rcon', 'mc.example.com:25575'];
const refusal = (argv: string[], environment: NodeJS.ProcessEnv = env) => {
  try {
    parseOptions(argv, environment);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error('accepted');
};

describe('the agent command line', () => {
  it('reads flags, secrets from the environment, and defaults', () => {
    expect(parseOptions(base, env)).toEqual({
      api: 'https://api.example.com/v1',
      rcon: { host: 'mc.example.com', port: 25575 },
      key: 'sak_key',
      rconPassword: 'pw',
      intervalSeconds: 10,
      onlineCommand: 'list',
      onlineParser: { kind: 'minecraft' },
      once: false,
      stateFile: undefined,
    });
    expect(parseOptions([...base, '--interval', '2.5', '--once', '--online-command', 'status', '--online-parser', 'lines'], env)).toMatchObject({
      intervalSeconds: 2.5,
      once: true,
      onlineCommand: 'status',
      onlineParser: { kind: 'lines' },
    });
    expect(parseOptions(['--api', 'http://127.0.0.1:3000/v1', '--rcon', '[::1]'], env)).toMatchObject({ rcon: { host: '::1', port: 25575 } });
    expect(parseOptions(['--help'], {})).toBe('help');
  });

  it('never takes a secret as a flag value', () => {
    expect(refusal([...base, '--key', 'sak_key'])).toBe('the delivery key is never a command-line value: set STORE_API_KEY or pass --key-file <path>');
    expect(refusal([...base, '--rcon-password=pw'])).toBe('the RCON password is never a command-line value: set RCON_PASSWORD or pass --rcon-password-file <path>');
  });

  it('refuses a missing key, password or flag, and a bad value, in one line', () => {
    expect(refusal(base, { RCON_PASSWORD: 'pw' })).toBe('the delivery key is missing: set STORE_API_KEY or pass --key-file <path>');
    expect(refusal(base, { STORE_API_KEY: 'k', RCON_PASSWORD: '' })).toBe('the RCON password is missing: set RCON_PASSWORD or pass --rcon-password-file <path>');
    expect(refusal(['--rcon', 'a:1'])).toBe('--api <API base> is required, e.g. --api https://api.example.com/v1');
    expect(refusal(['--api', 'https://a/v1'])).toBe('--rcon <host:port> is required, e.g. --rcon 127.0.0.1:25575');
    expect(refusal([...base, '--interval', '0'])).toBe('--interval must be a number of seconds from 1 to 3600, not "0"');
    expect(refusal([...base, '--interval', 'soon'])).toBe('--interval must be a number of seconds from 1 to 3600, not "soon"');
    expect(refusal(['--api', 'ftp://a/v1', '--rcon', 'a:1'])).toBe('--api must be an http(s) URL');
    expect(refusal(['--api', 'https://a/v1', '--rcon', 'a:99999'])).toBe('--rcon must be host:port, such as 127.0.0.1:25575, not "a:99999"');
    expect(refusal([...base, '--verbose'])).toMatch(/^Unknown option '--verbose'.* \(see --help\)$/);
    expect(refusal([...base, 'extra'])).toMatch(/positional argument/);
    expect(refusal([...base, '--online-command', ' '])).toBe('--online-command must not be empty');
  });
});

describe('backoff and answers', () => {
  it('doubles from the first wait to the longest, spread by +-20 %, and starts over after a success', () => {
    const low = new Backoff(1000, 60_000, () => 0);
    expect(Array.from({ length: 8 }, () => low.next())).toEqual([800, 1600, 3200, 6400, 12_800, 25_600, 48_000, 48_000]);
    low.reset();
    expect(low.next()).toBe(800);
    expect(new Backoff(1000, 60_000, () => 1).next()).toBe(1200);
    expect(jitter(10_000, () => 0.5)).toBe(10_000);
  });

  it('cuts an answer to 2,000 UTF-16 units as the store counts them, never inside a surrogate pair', () => {
    expect(cut('a'.repeat(2001), 2000)).toBe('a'.repeat(2000));
    expect(cut(`${'a'.repeat(1999)}😀`, 2000)).toBe('a'.repeat(1999));
    expect(cut('short', 2000)).toBe('short');
  });
});
