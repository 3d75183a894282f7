/**
 * Which `user-security` variants Portico runs (IBM "user-security", DataPower API Gateway
 * 2.0.0): identity from `basic` or `context-var`, authentication by a `user-registry` the
 * catalog enables, authorization `authenticated`; each phase may also be `disabled`. Every
 * other variant is a definition error at import and publish, never skipped: a form, a redirect
 * or an inline URL the gateway ignored would serve the API open. The import check and the
 * policy compiler share this list.
 */

/** One field of a user-security block that Portico cannot run as written. */
export interface UserSecurityProblem {
  field: string;
  rule: 'unsupported' | 'required' | 'inconsistent';
  reason: string;
}

const defaults = { extract: 'basic', auth: 'user-registry', az: 'authenticated' } as const;

function text(block: Record<string, unknown>, key: string): string | undefined {
  const value = block[key];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function extractionProblems(block: Record<string, unknown>): UserSecurityProblem[] {
  const method = text(block, 'extract-identity-method') ?? defaults.extract;
  if (method === 'html-form' || method === 'redirect') {
    return [
      {
        field: 'extract-identity-method',
        rule: 'unsupported',
        reason: `identity extraction ${method} is not supported; use basic or context-var`,
      },
    ];
  }
  if (method !== 'context-var') return [];
  return ['user-context-var', 'pass-context-var']
    .filter((key) => text(block, key) === undefined)
    .map((key) => ({
      field: key,
      rule: 'required' as const,
      reason: `context-var identity extraction needs ${key}`,
    }));
}

function authenticationProblems(block: Record<string, unknown>): UserSecurityProblem[] {
  const method = text(block, 'user-auth-method') ?? defaults.auth;
  if (method === 'auth-url' || method === 'ldap') {
    return [
      {
        field: 'user-auth-method',
        rule: 'unsupported',
        reason: `user-auth-method ${method} is not supported inline; create a user registry, enable it in the catalog and name it with user-registry`,
      },
    ];
  }
  if (method !== 'user-registry') return [];
  const problems: UserSecurityProblem[] = [];
  if (text(block, 'user-registry') === undefined) {
    problems.push({
      field: 'user-registry',
      rule: 'required',
      reason: 'user-registry authentication needs the name of a user registry',
    });
  }
  if ((text(block, 'extract-identity-method') ?? defaults.extract) === 'disabled') {
    problems.push({
      field: 'extract-identity-method',
      rule: 'inconsistent',
      reason: 'user-registry authentication needs an identity: extraction cannot be disabled',
    });
  }
  return problems;
}

function authorizationProblems(block: Record<string, unknown>): UserSecurityProblem[] {
  const method = text(block, 'user-az-method') ?? defaults.az;
  if (method !== 'html-form') return [];
  return [
    {
      field: 'user-az-method',
      rule: 'unsupported',
      reason: 'authorization html-form is not supported; use authenticated or disabled',
    },
  ];
}

/** What in a user-security block Portico cannot run (empty when it runs as written). */
export function userSecurityProblems(block: Record<string, unknown>): UserSecurityProblem[] {
  return [...extractionProblems(block), ...authenticationProblems(block), ...authorizationProblems(block)];
}

/** The user registry a user-security block authenticates with, when it names one. */
export function userSecurityRegistry(block: Record<string, unknown>): string | undefined {
  const method = text(block, 'user-auth-method') ?? defaults.auth;
  return method === 'user-registry' ? text(block, 'user-registry') : undefined;
}

/** The user registries the `user-security` policies of an assembly name, nested ones included. */
export function assemblyRegistries(document: Record<string, unknown>): string[] {
  const names = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (typeof node !== 'object' || node === null) return;
    for (const [key, value] of Object.entries(node)) {
      const name =
        key === 'user-security' && typeof value === 'object' && value !== null
          ? userSecurityRegistry(value as Record<string, unknown>)
          : undefined;
      if (name !== undefined) names.add(name);
      visit(value);
    }
  };
  const ibm = document['x-ibm-configuration'];
  visit(typeof ibm === 'object' && ibm !== null ? (ibm as Record<string, unknown>).assembly : undefined);
  return [...names];
}
