import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A certificate authority made per test run with `openssl` (present on these machines): a root,
 * an intermediate and a signing leaf, as PayPal's message-verification chain is built. Nothing is
 * kept: the keys live in memory and the working directory is removed.
 */
export interface TestPki {
  rootPem: string;
  /** Leaf then intermediate: what a `PAYPAL-CERT-URL` serves. */
  chainPem: string;
  leafKeyPem: string;
}

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
}

/** `cn`: the leaf's subject; `days`: its life from now. */
export function makeTestPki({ cn = 'messageverificationcerts.paypal.com', days = 2 }: { cn?: string; days?: number } = {}): TestPki {
  const dir = mkdtempSync(join(tmpdir(), 'test-pki-'));
  try {
    writeFileSync(join(dir, 'ca.ext'), 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n');
    writeFileSync(join(dir, 'leaf.ext'), 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n');
    openssl(dir, [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      'root.key',
      '-out',
      'root.pem',
      '-days',
      '3',
      '-subj',
      '/CN=Store API Test Root CA',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ]);
    openssl(dir, ['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'mid.key', '-out', 'mid.csr', '-subj', '/CN=Store API Test Intermediate CA']);
    openssl(dir, ['x509', '-req', '-in', 'mid.csr', '-CA', 'root.pem', '-CAkey', 'root.key', '-CAcreateserial', '-out', 'mid.pem', '-days', '3', '-extfile', 'ca.ext']);
    openssl(dir, ['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'leaf.key', '-out', 'leaf.csr', '-subj', `/O=PayPal, Inc./CN=${cn}`]);
    openssl(dir, ['x509', '-req', '-in', 'leaf.csr', '-CA', 'mid.pem', '-CAkey', 'mid.key', '-CAcreateserial', '-out', 'leaf.pem', '-days', String(days), '-extfile', 'leaf.ext']);
    const read = (file: string) => readFileSync(join(dir, file), 'utf8');
    return { rootPem: read('root.pem'), chainPem: read('leaf.pem') + read('mid.pem'), leafKeyPem: read('leaf.key') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
