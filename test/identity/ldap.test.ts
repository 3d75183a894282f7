/**
 * The LDAP user registry against a real OpenLDAP (Debian's slapd, started privately for this
 * file): search-then-bind and direct bind, ldaps:// and StartTLS, escaping of the user name,
 * and fail-closed answers (wrong password, unknown user, empty password, server down).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { escapeDnValue, escapeFilterValue, ldapVerifier } from '../../src/identity/ldap.ts';
import { checkConfiguration } from '../../src/identity/registry-config.ts';
import type { LdapConfiguration } from '../../src/identity/registry-config.ts';
import { basicHeaderFor } from '../../src/identity/types.ts';
import { VerdictCache } from '../../src/identity/verdict-cache.ts';
import type { VerdictStore } from '../../src/identity/verdict-cache.ts';
import { adminDn, adminPassword, baseDn, startSlapd } from '../helpers/slapd.ts';
import type { Slapd } from '../helpers/slapd.ts';

let slapd: Slapd;
before(async () => {
  slapd = await startSlapd();
});
after(async () => {
  await slapd?.stop();
});

const credentials = (username: string, password: string) => ({
  username,
  password,
  header: basicHeaderFor(username, password),
});

function searchConfig(extra: Record<string, unknown> = {}): LdapConfiguration {
  const written = {
    url: slapd.url,
    admin_dn: adminDn,
    admin_password: adminPassword,
    search_dn_base: baseDn,
    timeout: 2,
    ...extra,
  };
  return checkConfiguration('ldap', written) as LdapConfiguration;
}

const verifier = (config: LdapConfiguration, tls?: { ca: string }, cache?: VerdictStore) =>
  ldapVerifier('corp', `v-${Math.random()}`, config, tls, cache);

describe('LDAP search-then-bind', () => {
  test('authenticates a user with the right password', async () => {
    assert.deepEqual(await verifier(searchConfig()).verify(credentials('alice', 'alice-pass-1')), {
      outcome: 'authenticated',
      user: 'alice',
    });
  });
  test('refuses a wrong password', async () => {
    assert.deepEqual(await verifier(searchConfig()).verify(credentials('alice', 'wrong')), {
      outcome: 'refused',
    });
  });
  test('refuses an unknown user', async () => {
    assert.deepEqual(await verifier(searchConfig()).verify(credentials('mallory', 'alice-pass-1')), {
      outcome: 'refused',
    });
  });
  test('refuses an empty password (it would be an unauthenticated bind, which LDAP answers with success)', async () => {
    assert.deepEqual(await verifier(searchConfig()).verify(credentials('alice', '')), { outcome: 'refused' });
  });
  test('refuses a filter injection: `*)(uid=*` matches no user and binds as no one', async () => {
    const v = verifier(searchConfig());
    assert.deepEqual(await v.verify(credentials('*)(uid=*', 'alice-pass-1')), { outcome: 'refused' });
    assert.deepEqual(await v.verify(credentials('*', 'alice-pass-1')), { outcome: 'refused' });
    assert.deepEqual(await v.verify(credentials('al*', 'alice-pass-1')), { outcome: 'refused' });
  });
  test('refuses a user name found twice (ambiguous) rather than picking one', async () => {
    assert.deepEqual(await verifier(searchConfig()).verify(credentials('twin', 'twin-pass-1')), {
      outcome: 'refused',
    });
  });
  test('anonymous search works without a service DN', async () => {
    const config = checkConfiguration('ldap', {
      url: slapd.url,
      search_dn_base: baseDn,
    }) as LdapConfiguration;
    assert.deepEqual(await verifier(config).verify(credentials('bob', 'bob-pass-1')), {
      outcome: 'authenticated',
      user: 'bob',
    });
  });
  test('a service DN that cannot bind makes the registry unavailable (503), not the caller wrong', async () => {
    const verdict = await verifier(searchConfig({ admin_password: 'not-the-password' })).verify(
      credentials('alice', 'alice-pass-1'),
    );
    assert.equal(verdict.outcome, 'unavailable');
  });
  test('a server that is down is unavailable', async () => {
    const verdict = await verifier(searchConfig({ url: 'ldap://127.0.0.1:1' })).verify(
      credentials('alice', 'alice-pass-1'),
    );
    assert.equal(verdict.outcome, 'unavailable');
  });
});

describe('LDAP direct bind (compose_dn)', () => {
  const compose = () =>
    checkConfiguration('ldap', {
      url: slapd.url,
      authentication_method: 'compose_dn',
      bind_prefix: 'uid=',
      bind_suffix: `,ou=people,${baseDn}`,
    }) as LdapConfiguration;
  test('authenticates with the composed DN', async () => {
    assert.deepEqual(await verifier(compose()).verify(credentials('bob', 'bob-pass-1')), {
      outcome: 'authenticated',
      user: 'bob',
    });
  });
  test('refuses a wrong password', async () => {
    assert.deepEqual(await verifier(compose()).verify(credentials('bob', 'alice-pass-1')), {
      outcome: 'refused',
    });
  });
  test('a user name cannot name another entry: `bob,ou=people` is escaped into one RDN value', async () => {
    const verdict = await verifier(compose()).verify(credentials(`admin,${baseDn.replace(/^/, '')}`, adminPassword));
    assert.deepEqual(verdict, { outcome: 'refused' });
  });
});

describe('LDAP over TLS', () => {
  test('ldaps:// with the server certificate as CA authenticates', async () => {
    const v = verifier(searchConfig({ url: slapd.ldapsUrl }), { ca: slapd.certificate });
    assert.deepEqual(await v.verify(credentials('alice', 'alice-pass-1')), {
      outcome: 'authenticated',
      user: 'alice',
    });
  });
  test('ldaps:// with a certificate the gateway does not trust is unavailable, never open', async () => {
    const verdict = await verifier(searchConfig({ url: slapd.ldapsUrl })).verify(credentials('alice', 'alice-pass-1'));
    assert.equal(verdict.outcome, 'unavailable');
  });
  test('StartTLS upgrades ldap:// before the bind', async () => {
    const v = verifier(searchConfig({ starttls: true }), { ca: slapd.certificate });
    assert.deepEqual(await v.verify(credentials('alice', 'alice-pass-1')), {
      outcome: 'authenticated',
      user: 'alice',
    });
  });
});

describe('LDAP answers are cached, positive only', () => {
  test('only the positive answer is remembered: one entry after an accepted and a refused call', async () => {
    const cache = new VerdictCache({ ttlMs: 60_000, maxEntries: 10 });
    const v = verifier(searchConfig(), undefined, cache.partition('acme'));
    assert.equal((await v.verify(credentials('alice', 'alice-pass-1'))).outcome, 'authenticated');
    assert.equal((await v.verify(credentials('alice', 'wrong'))).outcome, 'refused');
    assert.equal(cache.size, 1);
  });
});

describe('escaping (RFC 4515, RFC 4514)', () => {
  test('filter values', () => {
    assert.equal(escapeFilterValue('*)(uid=*'), '\\2a\\29\\28uid=\\2a');
    assert.equal(escapeFilterValue('a\\b\0'), 'a\\5cb\\00');
  });
  test('DN values', () => {
    assert.equal(escapeDnValue('a,b+c="d"'), 'a\\,b\\+c\\=\\"d\\"');
    assert.equal(escapeDnValue(' #x '), '\\ #x\\ ');
  });
});
