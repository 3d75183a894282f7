/** The rules provider and portal accounts share: passwords, email addresses, password checks. */
import { PorticoError } from '../errors.ts';
import { verifyPassword } from '../store/secrets.ts';
import type { SignInLimiter } from '../web/sign-in-limiter.ts';

export const passwordMinLength = 10;
export const passwordRules = `at least ${passwordMinLength} characters, with at least one letter and one digit`;

/** Checks a new password against the stated rules; throws naming the field. */
export function checkPasswordRules(password: unknown, field = 'password'): string {
  if (
    typeof password !== 'string' ||
    password.length < passwordMinLength ||
    !/[A-Za-z]/.test(password) ||
    !/\d/.test(password)
  ) {
    throw new PorticoError('MGMT_VALIDATION', { field, reason: `must be ${passwordRules}` });
  }
  if (password.length > 200) {
    throw new PorticoError('MGMT_VALIDATION', { field, reason: 'must be at most 200 characters' });
  }
  return password;
}

/** Checks and normalises an email address; throws naming `field`. */
export function checkEmail(value: unknown, field = 'email'): string {
  const email = typeof value === 'string' ? value.trim().toLowerCase() : '';
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) || email.length > 254) {
    throw new PorticoError('MGMT_VALIDATION', { field, reason: 'must be an email address' });
  }
  return email;
}

// An argon2id hash of a random string: verifying against it costs what a real check costs.
const dummyHash = '$argon2id$v=19$m=19456,t=2,p=1$c29tZXNhbHRzb21lc2FsdA$CTFhFdXPJO1aFaMaO6Mm5c8y7cJHAph8ArZWb2GRPPc';

/**
 * Whether `password` matches the user's hash. An unknown user is checked against a dummy
 * hash, so timing does not tell whether the account exists.
 */
export function passwordMatches(user: { password_hash: string } | undefined, password: unknown): Promise<boolean> {
  return verifyPassword(user?.password_hash ?? dummyHash, typeof password === 'string' ? password : '').then(
    (ok) => ok && user !== undefined,
  );
}

/**
 * A name or organization title as typed at sign-up, trimmed; empty when not given. It has at
 * most 100 characters and, since pages and mail show it, no control characters (no line
 * breaks); otherwise MGMT_VALIDATION naming `field`.
 */
export function checkOptionalLabel(value: unknown, field: string): string {
  if (value === undefined || value === null) return '';
  const label = typeof value === 'string' ? value.trim() : undefined;
  if (label === undefined || label.length > 100 || /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(label)) {
    throw new PorticoError('MGMT_VALIDATION', {
      field,
      reason: 'must be at most 100 characters on one line, without control characters',
    });
  }
  return label;
}

/**
 * The current password a signed-in user gives to change it, checked under the sign-in limits and
 * counted per account (`account`) from every address: a stolen session cannot guess it at full
 * speed. Past the limits MGMT_TOO_MANY_ATTEMPTS, even when it is right; a wrong one
 * MGMT_VALIDATION naming `currentPassword`.
 */
export async function checkCurrentPassword(
  limiter: SignInLimiter,
  account: string,
  user: { password_hash: string } | undefined,
  password: string,
  address: string,
): Promise<void> {
  try {
    await limiter.guard({ account, address, accountWide: true }, async () => {
      if (!(await passwordMatches(user, password))) throw new PorticoError('MGMT_BAD_CREDENTIALS');
    });
  } catch (error) {
    if (!(error instanceof PorticoError) || error.code !== 'MGMT_BAD_CREDENTIALS') throw error;
    throw new PorticoError('MGMT_VALIDATION', { field: 'currentPassword', reason: 'is not your current password' });
  }
}
