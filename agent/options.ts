import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { parseOnlineParser, type OnlineParser } from './online.ts';

/**
 * The command line of extensions section 14. Secrets are read from the environment or from a
 * file, never from a flag: a flag's value is visible to every user of the machine (`ps`,
 * /proc/<pid>/cmdline) and lands in shell history.
 */
export interface AgentConfig {
  api: string;
  rcon: { host: string; port: number };
  key: string;
  rconPassword: string;
  intervalSeconds: number;
  onlineCommand: string;
  onlineParser: OnlineParser;
  once: boolean;
  stateFile: string | undefined;
}

export const USAGE = `Usage: node agent.mjs --api <API base> --rcon <host:port> [options]

Delivers a store's purchases to a game server over RCON: claims the commands of approved
orders (POST /delivery/claim), runs them on the game, and acks each with the game's answer.

  --api <url>                  the store API base, e.g. https://api.example.com/v1
  --rcon <host:port>           the game server's RCON address (port 25575 if left out)
  --interval <seconds>         wait between claims that hand out nothing (default 10, +-20 %)
  --online-command <command>   asks the game who is online before each claim (default "list")
  --online-parser <parser>     reads its answer: minecraft (default), lines (a name per line),
                               none (nobody; the game is not asked), or /regex/ (each match's
                               first group is a player)
  --state-file <path>          keeps results that ran but are not acked yet across restarts
  --once                       one cycle (online, claim, run, ack), then exit
  --key-file <path>            a file holding the delivery key (else STORE_API_KEY)
  --rcon-password-file <path>  a file holding the RCON password (else RCON_PASSWORD)
  --help                       this text

Secrets are never command-line values. Exit codes: 0 done, 1 results left unacked, a cycle
that could not run (--once) or a key the API refused, 2 a missing key or password or a bad flag.`;

/** A missing or bad input: one line on stderr, exit code 2. */
export class UsageError extends Error {}

const SECRET_FLAGS: Record<string, string> = {
  key: 'the delivery key is never a command-line value: set STORE_API_KEY or pass --key-file <path>',
  'api-key': 'the delivery key is never a command-line value: set STORE_API_KEY or pass --key-file <path>',
  'rcon-password': 'the RCON password is never a command-line value: set RCON_PASSWORD or pass --rcon-password-file <path>',
  password: 'the RCON password is never a command-line value: set RCON_PASSWORD or pass --rcon-password-file <path>',
};

/** Answers the configuration, `'help'`, or throws UsageError. */
export function parseOptions(argv: string[], env: NodeJS.ProcessEnv): AgentConfig | 'help' {
  for (const arg of argv) {
    const name = /^--([^=]+)/.exec(arg)?.[1];
    if (name && SECRET_FLAGS[name]) throw new UsageError(SECRET_FLAGS[name]);
  }
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        api: { type: 'string' },
        rcon: { type: 'string' },
        interval: { type: 'string' },
        'online-command': { type: 'string' },
        'online-parser': { type: 'string' },
        'state-file': { type: 'string' },
        once: { type: 'boolean' },
        'key-file': { type: 'string' },
        'rcon-password-file': { type: 'string' },
        help: { type: 'boolean' },
      },
    }));
  } catch (error) {
    throw new UsageError(`${(error as Error).message} (see --help)`);
  }
  if (values.help) return 'help';
  if (!values.api) throw new UsageError('--api <API base> is required, e.g. --api https://api.example.com/v1');
  if (!values.rcon) throw new UsageError('--rcon <host:port> is required, e.g. --rcon 127.0.0.1:25575');
  const onlineParser = parseOnlineParser(values['online-parser'] ?? 'minecraft');
  if (typeof onlineParser === 'string') throw new UsageError(onlineParser);
  const onlineCommand = values['online-command'] ?? 'list';
  if (onlineCommand.trim() === '') throw new UsageError('--online-command must not be empty');
  return {
    api: apiBase(values.api),
    rcon: rconAddress(values.rcon),
    key: secret('the delivery key', env.STORE_API_KEY, values['key-file'], 'STORE_API_KEY', '--key-file'),
    rconPassword: secret('the RCON password', env.RCON_PASSWORD, values['rcon-password-file'], 'RCON_PASSWORD', '--rcon-password-file'),
    intervalSeconds: interval(values.interval ?? '10'),
    onlineCommand,
    onlineParser,
    once: values.once ?? false,
    stateFile: values['state-file'],
  };
}

function apiBase(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`--api must be a URL such as https://api.example.com/v1, not "${value}"`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new UsageError('--api must be an http(s) URL');
  if (url.search || url.hash) throw new UsageError('--api is the base URL alone, without ? or #');
  return url.toString().replace(/\/+$/, '');
}

function rconAddress(value: string): { host: string; port: number } {
  const match = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(value);
  const port = Number(match?.[2] ?? 25575);
  if (!match || !Number.isInteger(port) || port < 1 || port > 65535) throw new UsageError(`--rcon must be host:port, such as 127.0.0.1:25575, not "${value}"`);
  return { host: match[1]!.replace(/^\[|\]$/g, ''), port };
}

function interval(value: string): number {
  const seconds = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || seconds < 1 || seconds > 3600) throw new UsageError(`--interval must be a number of seconds from 1 to 3600, not "${value}"`);
  return seconds;
}

/** A file wins over the environment; a trailing newline (as `echo` writes) is not part of the secret. */
function secret(what: string, fromEnv: string | undefined, file: string | undefined, variable: string, flag: string): string {
  let value = fromEnv;
  if (file !== undefined) {
    try {
      value = readFileSync(file, 'utf8');
    } catch (error) {
      throw new UsageError(`${flag}: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
    }
  }
  value = value?.replace(/\r?\n$/, '');
  if (!value) throw new UsageError(`${what} is missing: set ${variable} or pass ${flag} <path>`);
  return value;
}
