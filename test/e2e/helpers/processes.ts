/** What Linux's /proc says about processes: a process's children, its command line and where it listens. */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** Process ids whose parent is `pid`. */
export function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((name) => {
      try {
        // The parent pid is the 4th field, after the command in parentheses.
        const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** A process's command line, its arguments joined by spaces ('' once it has ended). */
export function commandLineOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return '';
  }
}

/**
 * The addresses the process's listening TCP sockets are bound to (`127.0.0.1:4000`, `[::]:4000`): its open
 * socket inodes matched against the kernel's socket tables.
 */
export function listeningAddresses(pid: number): string[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      if (inode !== undefined) inodes.add(inode);
    } catch {
      // closed meanwhile
    }
  }
  const addresses: string[] = [];
  for (const table of ['tcp', 'tcp6'] as const) {
    const rows = readFileSync(`/proc/${pid}/net/${table}`, 'utf8').trim().split('\n').slice(1);
    for (const row of rows) {
      const fields = row.trim().split(/\s+/);
      const [local, state, inode] = [fields[1], fields[3], fields[9]];
      // State 0A is LISTEN.
      if (local === undefined || state !== '0A' || inode === undefined || !inodes.has(inode)) continue;
      addresses.push(decodeAddress(local, table));
    }
  }
  return addresses;
}

/** `0100007F:0FA0` (the kernel's hex, each 32-bit word in host order: little-endian here) as `127.0.0.1:4000`. */
function decodeAddress(hex: string, table: 'tcp' | 'tcp6'): string {
  const [host = '', port = ''] = hex.split(':');
  const words = (host.match(/.{8}/g) ?? []).map((word) => Buffer.from(word, 'hex').reverse().toString('hex'));
  const portNumber = Number.parseInt(port, 16);
  if (table === 'tcp') {
    const bytes = Buffer.from(words.join(''), 'hex');
    return `${[...bytes].join('.')}:${portNumber}`;
  }
  const groups = (words.join('').match(/.{4}/g) ?? []).map((group) => group.replace(/^0{1,3}/, ''));
  return `[${groups.join(':').replace(/(^|:)0(:0)+(:|$)/, '::')}]:${portNumber}`;
}
