/**
 * A private OpenLDAP server (Debian's slapd) for one test file: a slapd.conf with the mdb
 * backend in a temporary directory, users loaded with slapadd before start, a free port on
 * 127.0.0.1, plain ldap:// plus ldaps:// and StartTLS with a self-signed certificate made by
 * the openssl CLI. `stop()` kills it and removes the directory.
 */
import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeLoopbackCertificate } from './tls.ts';

export const baseDn = 'dc=portico,dc=test';
export const adminDn = `cn=admin,${baseDn}`;
export const adminPassword = 'admin-secret-1';

export interface Slapd {
  url: string;
  ldapsUrl: string;
  /** The CA (the self-signed certificate itself) in PEM. */
  certificate: string;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function waitForPort(port: number, deadline: number): Promise<void> {
  while (Date.now() < deadline) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`slapd did not listen on ${port}`);
}

function userEntry(uid: string, password: string, ou = 'people'): string {
  return `dn: uid=${uid},ou=${ou},${baseDn}
objectClass: inetOrgPerson
uid: ${uid}
cn: ${uid}
sn: ${uid}
userPassword: ${password}
`;
}

/** Users: alice / alice-pass-1 and bob / bob-pass-1 in ou=people; a second "twin" in two OUs. */
function ldif(): string {
  return [
    `dn: ${baseDn}\nobjectClass: dcObject\nobjectClass: organization\ndc: portico\no: Portico\n`,
    `dn: ou=people,${baseDn}\nobjectClass: organizationalUnit\nou: people\n`,
    `dn: ou=others,${baseDn}\nobjectClass: organizationalUnit\nou: others\n`,
    userEntry('alice', 'alice-pass-1'),
    userEntry('bob', 'bob-pass-1'),
    userEntry('twin', 'twin-pass-1'),
    userEntry('twin', 'twin-pass-1', 'others'),
  ].join('\n');
}

export async function startSlapd(): Promise<Slapd> {
  const dir = mkdtempSync(join(tmpdir(), 'portico-slapd-'));
  const data = join(dir, 'data');
  execFileSync('mkdir', ['-p', data]);
  writeLoopbackCertificate(dir);
  const config = `include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/inetorgperson.schema
modulepath /usr/lib/ldap
moduleload back_mdb
pidfile ${join(dir, 'slapd.pid')}
TLSCertificateFile ${join(dir, 'cert.pem')}
TLSCertificateKeyFile ${join(dir, 'key.pem')}
database mdb
maxsize 10485760
suffix "${baseDn}"
rootdn "${adminDn}"
rootpw ${adminPassword}
directory ${data}
access to attrs=userPassword by anonymous auth by * none
access to * by * read
`;
  const conf = join(dir, 'slapd.conf');
  writeFileSync(conf, config);
  writeFileSync(join(dir, 'users.ldif'), ldif());
  execFileSync('/usr/sbin/slapadd', ['-f', conf, '-l', join(dir, 'users.ldif')], { stdio: 'pipe' });
  const port = await freePort();
  const tlsPort = await freePort();
  const urls = `ldap://127.0.0.1:${port}/ ldaps://127.0.0.1:${tlsPort}/`;
  const child: ChildProcess = spawn('/usr/sbin/slapd', ['-f', conf, '-h', urls, '-d', '0'], {
    stdio: 'ignore',
  });
  await waitForPort(port, Date.now() + 10_000);
  await waitForPort(tlsPort, Date.now() + 10_000);
  return {
    url: `ldap://127.0.0.1:${port}`,
    ldapsUrl: `ldaps://127.0.0.1:${tlsPort}`,
    certificate: execFileSync('cat', [join(dir, 'cert.pem')]).toString(),
    async stop() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
