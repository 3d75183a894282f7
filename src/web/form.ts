/** Reading submitted forms and safe redirect targets. */
import type { FastifyRequest } from 'fastify';
import { PorticoError } from '../errors.ts';

/** A submitted form field as text ('' when absent; the first value when repeated). */
export function formField(request: FastifyRequest, name: string): string {
  const body = request.body as Record<string, unknown> | undefined;
  const value = body?.[name];
  if (Array.isArray(value)) return typeof value[0] === 'string' ? value[0] : '';
  return typeof value === 'string' ? value : '';
}

/** All submitted fields as text. */
export function formFields(request: FastifyRequest): Record<string, string> {
  const body = (request.body ?? {}) as Record<string, unknown>;
  const out: Record<string, string> = {};
  for (const name of Object.keys(body)) out[name] = formField(request, name);
  return out;
}

/** A query-string value as text. */
export function queryField(request: FastifyRequest, name: string): string {
  const value = (request.query as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : '';
}

/** A local path to return to after signing in; anything else (other hosts, `//x`) becomes `/`. */
export function localPath(candidate: string, fallback = '/'): string {
  return /^\/(?![/\\])[^\s]*$/.test(candidate) ? candidate : fallback;
}

const shownOnForms = ['MGMT_VALIDATION', 'MGMT_CONFLICT', 'MGMT_FORBIDDEN', 'MGMT_EMAIL_UNVERIFIED'];

/** The message of an error a form shows to its user (validation and conflicts); other errors are rethrown. */
export function formErrorMessage(error: unknown): string {
  if (error instanceof PorticoError && shownOnForms.includes(error.code)) {
    if (error.code === 'MGMT_VALIDATION')
      return `${fieldLabel(String(error.params.field ?? ''))} ${String(error.params.reason ?? '')}`.trim();
    return error.message;
  }
  throw error;
}

const labels: Record<string, string> = {
  username: 'Username',
  role: 'Role',
  email: 'Email',
  password: 'Password',
  newPassword: 'New password',
  currentPassword: 'Current password',
  title: 'Title',
  plan: 'Plan',
};

function fieldLabel(field: string): string {
  return labels[field] ?? field;
}
