/**
 * The error catalogue: every error Portico reports, with a stable code, an HTTP status and a
 * message template. `docs/errors.md` lists each code; a test keeps the two in step.
 *
 * Consumer-facing errors (the gateway) are written in API Connect's envelope
 * `{"httpCode","httpMessage","moreInformation"}` (IBM support, "How to use the Global Error
 * Policy to Catch Errors"); provider-facing errors (management API, CLI, definitions) as
 * `{"error":{"code","message","field"?,"file"?,"path"?,"rule"?}}`.
 */

export interface ErrorSpec {
  status: number;
  /** Message template; `{name}` placeholders are filled from the error's params. */
  message: string;
}

export const errorCatalogue = {
  // ── gateway (consumer) ────────────────────────────────────────────────────────────────
  // Errors raised inside an assembly carry API Connect's names instead (ConnectionError,
  // SOAPError, …: policies/types.ts AssemblyError), as catch blocks match them.
  GW_NOT_FOUND: { status: 404, message: 'No resources match requested URI' },
  GW_METHOD_NOT_ALLOWED: { status: 405, message: 'The method {method} is not allowed for the requested URI' },
  GW_MISSING_PARAMETER: {
    status: 400,
    message: 'One or more required API parameters are missing in the API request. Missing: {name} ({in})',
  },
  GW_INVALID_PARAMETER: { status: 400, message: 'The API parameter {name} ({in}) is invalid: {reason}' },
  GW_BAD_HEADER: { status: 400, message: 'The request header {name} is invalid: {reason}' },
  GW_BAD_REQUEST_BODY: { status: 400, message: 'The request body could not be parsed: {reason}' },
  GW_INVALID_PATH: { status: 400, message: 'The request path is not valid: {reason}' },
  GW_UNSAFE_TARGET_VALUE: {
    status: 400,
    message: 'The value of {name} cannot be used in the backend URL: {reason}',
  },
  GW_UNAUTHORIZED: { status: 401, message: 'Invalid client id or secret.' },
  GW_USER_UNAUTHORIZED: { status: 401, message: 'Invalid user name or password.' },
  GW_USER_FORBIDDEN: { status: 403, message: 'The user is not authorized to call this API.' },
  GW_REGISTRY_UNAVAILABLE: {
    status: 503,
    message: 'The user registry that authenticates this API could not be reached; the request is refused',
  },
  GW_NOT_SUBSCRIBED: {
    status: 401,
    message: 'Client id {clientId} is not subscribed to a plan that contains this API ({reason})',
  },
  GW_INVALID_TOKEN: {
    status: 401,
    message: 'The access token is not valid: unknown, inactive, expired, or not issued to a known application',
  },
  GW_INSUFFICIENT_SCOPE: {
    status: 403,
    message: 'The access token does not grant the scope this operation needs: {scope}',
  },
  GW_INTROSPECTION_UNAVAILABLE: {
    status: 503,
    message: 'The access token cannot be checked now: the OAuth provider did not answer',
  },
  GW_JWT_INVALID: { status: 401, message: 'The JWT is not valid: {reason}' },
  // No {reason}: it names the provider's key URL and its network error (the log has it).
  GW_JWKS_UNAVAILABLE: { status: 503, message: 'No key to verify the JWT is available' },
  GW_JWT_GENERATE_FAILED: { status: 500, message: 'The JWT could not be generated: {reason}' },
  // No {reason}: it names the catalog's configuration (TLS profiles, user registries); the gateway
  // logs it with the operation when it loads the API.
  GW_SECURITY_UNSUPPORTED: {
    status: 500,
    message: 'This operation is refused: its security cannot be enforced by the gateway',
  },
  GW_PAYLOAD_TOO_LARGE: { status: 413, message: 'The request body is larger than {limit} bytes' },
  GW_RATE_LIMIT: { status: 429, message: 'Rate Limit exceeded' },
  GW_INVALID_VARIABLE: { status: 500, message: 'The context variable {name} cannot be {action}: {reason}' },
  GW_EXPRESSION_BUDGET: { status: 500, message: 'The JSONata expression {expression} was stopped: {reason}' },
  GW_BAD_BACKEND_RESPONSE: {
    status: 502,
    message: 'The backend response could not be read in policy {policy}: {reason}',
  },
  GW_INVALID_TARGET_URL: { status: 502, message: 'The backend URL is not valid: {reason}' },
  GW_UNAVAILABLE: { status: 503, message: 'The gateway is not ready: {reason}' },
  GW_SCRIPT_BUSY: {
    status: 503,
    message: 'GatewayScript policy {policy}: no script worker was free within {ms} ms',
  },
  GW_INTERNAL: { status: 500, message: 'Internal gateway error (transaction {txId})' },

  // ── definitions (import) ──────────────────────────────────────────────────────────────
  DEF_PARSE: { status: 400, message: '{file}: cannot be parsed as {format}: {reason}' },
  DEF_INVALID: { status: 400, message: '{file}: {path}: {reason}' },

  // ── management API / provider ─────────────────────────────────────────────────────────
  MGMT_VALIDATION: { status: 400, message: '{field}: {reason}' },
  MGMT_UNAUTHENTICATED: { status: 401, message: 'Sign in required: {reason}' },
  MGMT_BAD_CREDENTIALS: { status: 401, message: 'Wrong username or password' },
  MGMT_FORBIDDEN: { status: 403, message: '{reason}' },
  MGMT_CSRF: { status: 403, message: 'Missing or invalid CSRF token' },
  MGMT_NOT_FOUND: { status: 404, message: '{kind} {id} not found' },
  MGMT_CONFLICT: { status: 409, message: '{reason}' },
  MGMT_TOO_MANY_ATTEMPTS: {
    status: 429,
    message: 'Too many sign-in attempts; try again in {seconds} seconds',
  },
  MGMT_EMAIL_UNVERIFIED: { status: 403, message: 'Verify your email address first: {reason}' },
  MGMT_TOO_MANY_EMAILS: {
    status: 429,
    message: 'Too many emails to this address; try again in {seconds} seconds',
  },
  MGMT_PAYLOAD_TOO_LARGE: { status: 413, message: 'The request body is larger than {limit} bytes' },
  MGMT_DOCUMENT_TOO_COMPLEX: {
    status: 413,
    message:
      'The document {file} needs more than {limitMb} MB of memory to read; split it, or raise PORTICO_IMPORT_MEMORY_MB',
  },
  MGMT_INTERNAL: { status: 500, message: 'Internal error: {reason}' },

  // ── configuration / CLI ───────────────────────────────────────────────────────────────
  CONFIG_INVALID: { status: 500, message: 'Setting {setting} is invalid: {reason}' },
  PORT_IN_USE: {
    status: 500,
    message: 'Port {port} is already in use; change {setting} or stop the other process',
  },
  STORE_UNREACHABLE: { status: 503, message: 'Cannot reach the database at {url}: {reason}' },
  CLI_NOT_LOGGED_IN: {
    status: 401,
    message: 'Not logged in: run `portico login --server URL` or set PORTICO_SERVER and PORTICO_TOKEN',
  },
  CLI_SERVER_UNREACHABLE: {
    status: 500,
    message: 'Cannot reach the management server at {server}: {reason}',
  },
  CLI_FILE: { status: 400, message: '{file}: {reason}' },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof errorCatalogue;

export type ErrorParams = Record<string, string | number | undefined>;

/** Fills `{name}` placeholders; unknown placeholders are left visible rather than dropped. */
export function formatMessage(template: string, params: ErrorParams): string {
  return template.replace(/\{(\w+)\}/g, (whole, key: string) => {
    const value = params[key];
    return value === undefined ? whole : String(value);
  });
}

const noHeaders: Readonly<Record<string, string>> = Object.freeze({});

/**
 * An error from the catalogue. Match on `code`, never on `message`. `headers` are fields the
 * answer must carry besides the envelope: `Allow` with a 405 (RFC 9110 §15.5.6), `Retry-After`
 * with a 429 (RFC 6585 §4), `WWW-Authenticate` with a 401 (RFC 9110 §11.6.1).
 */
export class PorticoError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly params: ErrorParams;
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    code: ErrorCode,
    params: ErrorParams = {},
    options?: { cause?: unknown; status?: number; headers?: Record<string, string> },
  ) {
    const spec: ErrorSpec = errorCatalogue[code];
    super(formatMessage(spec.message, params), options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'PorticoError';
    this.code = code;
    this.status = options?.status ?? spec.status;
    this.params = params;
    this.headers = options?.headers ?? noHeaders;
  }

  /** The provider-facing JSON body. */
  toJSON(): { error: Record<string, unknown> } {
    const body: Record<string, unknown> = { code: this.code, message: this.message };
    for (const key of ['field', 'file', 'path', 'rule', 'kind', 'id'] as const) {
      if (this.params[key] !== undefined) body[key] = this.params[key];
    }
    return { error: body };
  }
}

/** One problem found in a definition document. */
export interface DefinitionProblem {
  /** JSON path in the document, e.g. `$.x-ibm-configuration.assembly.execute[0].invoke.target-url`. */
  path: string;
  /** The rule broken, e.g. `required`, `unknown-policy`, `unresolved-ref`, `duplicate-operation-id`. */
  rule: string;
  reason: string;
}

/** The problems a {@link DefinitionError} lists; the message and `problemCount` count them all. */
export const maxListedProblems = 100;

/**
 * A definition that failed validation: the problems found, each with file, path and rule, the
 * first {@link maxListedProblems} listed in the order found (as linters and API Connect do).
 */
export class DefinitionError extends PorticoError {
  readonly file: string;
  readonly problems: DefinitionProblem[];
  /** Every problem found, listed or not. */
  readonly problemCount: number;

  /** `problemCount` is given where `problems` is already cut (an error rebuilt from its JSON). */
  constructor(file: string, problems: DefinitionProblem[], problemCount = problems.length) {
    const first = problems[0] ?? { path: '$', rule: 'invalid', reason: 'invalid document' };
    super('DEF_INVALID', { file, path: first.path, rule: first.rule, reason: first.reason });
    this.name = 'DefinitionError';
    this.file = file;
    this.problems = problems.slice(0, maxListedProblems);
    this.problemCount = Math.max(problemCount, problems.length);
    if (this.problemCount > 1)
      this.message += ` (and ${this.problemCount - 1} more problem${this.problemCount > 2 ? 's' : ''})`;
  }

  override toJSON(): { error: Record<string, unknown> } {
    const out = super.toJSON();
    out.error.problems = this.problems;
    if (this.problemCount > this.problems.length) out.error.problemCount = this.problemCount;
    return out;
  }
}

const reasonPhrases: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Payload Too Large',
  422: 'Unprocessable Entity',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

export function reasonPhrase(status: number): string {
  return reasonPhrases[status] ?? 'Error';
}

/** API Connect's consumer error envelope; `httpCode` is a string, as DataPower writes it. */
export interface ErrorEnvelope {
  httpCode: string;
  httpMessage: string;
  moreInformation: string;
}

export function errorEnvelope(
  status: number,
  moreInformation: string,
  httpMessage = reasonPhrase(status),
): ErrorEnvelope {
  return { httpCode: String(status), httpMessage, moreInformation };
}
