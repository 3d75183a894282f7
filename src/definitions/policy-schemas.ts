/**
 * One JSON schema per assembly policy type, with API Connect's field names (IBM "Policies"
 * reference for DataPower API Gateway, v10; v5 forms where they differ). Every property has a
 * type, a default where API Connect has one, and a description; unknown fields are refused
 * (`additionalProperties: false`), except that each schema lists the fields API Connect
 * writes even where Portico does not act on them, so exported documents validate as they are.
 *
 * Nested `execute` lists (operation-switch, switch, if) are typed here as arrays of objects;
 * the assembly validator checks each nested policy against its own schema.
 */
import type { JSONSchema } from '../policies/types.ts';

export interface PolicySchemaEntry {
  /** Versions accepted; an absent `version:` means the first (API Connect v5 wrote none). */
  versions: string[];
  schema: JSONSchema;
  description: string;
}

function str(description: string, defaultValue?: string, extra: JSONSchema = {}): JSONSchema {
  return { type: 'string', description, ...(defaultValue === undefined ? {} : { default: defaultValue }), ...extra };
}

function bool(description: string, defaultValue: boolean): JSONSchema {
  return { type: 'boolean', default: defaultValue, description };
}

function int(description: string, defaultValue?: number, extra: JSONSchema = {}): JSONSchema {
  return { type: 'integer', description, ...(defaultValue === undefined ? {} : { default: defaultValue }), ...extra };
}

function oneOfStrings(values: string[], description: string, defaultValue?: string): JSONSchema {
  return str(description, defaultValue, { enum: values });
}

/** A field API Connect writes that Portico refuses at import (`not: {}` matches nothing). */
function refused(description: string): JSONSchema {
  return { type: 'string', description, not: {} };
}

const executeList: JSONSchema = {
  type: 'array',
  default: [],
  description: 'Policies to run, in order; each entry is a one-key object naming its policy.',
  items: { type: 'object' },
};

/** Builds a policy schema: the common fields (version, title, description) plus `properties`. */
function policy(versions: string[], properties: Record<string, JSONSchema>, required: string[] = [], extra: JSONSchema = {}): JSONSchema {
  return {
    type: 'object',
    additionalProperties: false,
    required,
    properties: {
      version: str(`Policy version: ${versions.join(', ')}.`, versions[0]),
      title: str('Name shown in the assembly editor, logs and error messages.'),
      description: str('Free text about the step.', ''),
      ...properties,
    },
    ...extra,
  };
}

function accessControl(description: string, defaultType: 'blocklist' | 'allowlist'): JSONSchema {
  return {
    type: 'object',
    description,
    default: { type: defaultType, values: [] },
    additionalProperties: false,
    properties: {
      // API Connect wrote blacklist/whitelist before v10.0.1; both spellings are accepted.
      type: oneOfStrings(['blocklist', 'allowlist', 'blacklist', 'whitelist'], 'blocklist removes the listed names; allowlist keeps only them.', defaultType),
      values: { type: 'array', default: [], description: 'Names or regular expressions to match.', items: { type: 'string' } },
    },
  };
}

// invoke and proxy share their fields: proxy is an invoke whose result is the response.
const invokeFields: Record<string, JSONSchema> = {
  'target-url': str('URL of the backend; `$(var)` and `{param}` are substituted per request.'),
  'backend-type': oneOfStrings(['detect', 'xml', 'json', 'binary', 'graphql'], 'How the backend response body is read.', 'detect'),
  'tls-profile': str('Name of the TLS client profile used for https backends.', ''),
  verb: oneOfStrings(['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'keep', 'Keep'], 'HTTP method of the backend call; keep = the incoming request method.', 'keep'),
  timeout: int('Seconds to wait for the backend before a ConnectionError.', 60, { minimum: 1 }),
  compression: bool('Compress the request body (gzip) sent to the backend.', false),
  username: str('User name for HTTP basic authentication to the backend.'),
  password: str('Password for HTTP basic authentication to the backend.'),
  output: str('Variable receiving the response (body, headers, status); default message.', 'message'),
  'cache-key': str('Key identifying the cached response; default the URL.'),
  'cache-response': oneOfStrings(['protocol', 'no-cache', 'time-to-live'], 'Response caching: per HTTP cache headers, never, or for cache-ttl seconds.', 'protocol'),
  'cache-putpost-response': bool('Also cache responses to PUT and POST.', false),
  'cache-ttl': int('Seconds a cached response stays valid (time-to-live).', 900, { minimum: 0 }),
  'inject-proxy-headers': bool('Add X-Forwarded-For/-Host/-Proto headers to the backend call.', false),
  'decode-request-params': bool('URL-decode request parameters substituted into target-url.', false),
  'encode-plus-char': bool('Encode + as %2B in the query of target-url.', false),
  'keep-payload': bool('Send the request body even on DELETE.', false),
  'use-http-10': bool('Use HTTP/1.0 for the backend call (v5 field).', false),
  'http-version': oneOfStrings(['HTTP/1.0', 'HTTP/1.1', 'HTTP/2'], 'HTTP version of the backend call.', 'HTTP/1.1'),
  'http2-required': bool('Fail instead of falling back when HTTP/2 cannot be negotiated.', false),
  'header-control': accessControl('Which request headers are passed to the backend.', 'blocklist'),
  'parameter-control': accessControl('Which request query parameters are appended to target-url.', 'allowlist'),
  'follow-redirects': bool('Follow 3xx redirects from the backend.', false),
  'stop-on-error': {
    type: 'array',
    default: [],
    description:
      'Error names (ConnectionError, OperationError, SOAPError) that stop the flow and go to the catch; empty = never stop. v5 writes [null] for none.',
    items: { type: ['string', 'null'] },
  },
  'websocket-upgrade': bool('Pass WebSocket upgrade requests through to the backend.', false),
  'persistent-connection': bool('Keep the backend connection open for reuse.', true),
  'chunked-uploads': bool('Send the request body with chunked transfer encoding.', true),
  'graphql-send-type': oneOfStrings(['detect', 'graphql', 'json'], 'How a GraphQL request is sent to the backend.', 'detect'),
  'inject-user-agent': bool('Add the gateway User-Agent header to the backend call.', false),
};

// IBM "user-security" (DataPower API Gateway 2.0.0). The form and redirect variants are listed so
// exported documents validate; the import check refuses them (validate-assembly.ts).
const userSecurityFields: Record<string, JSONSchema> = {
  'factor-id': str('Identifies the results of this factor in the API context; Portico runs one factor.', 'default'),
  'extract-identity-method': oneOfStrings(
    ['disabled', 'basic', 'context-var', 'html-form', 'redirect'],
    'Where the user name and password come from: the Authorization: Basic header, or two context variables.',
    'basic',
  ),
  'ei-stop-on-error': bool('Stop with UnauthorizedError when no identity can be extracted.', true),
  'user-context-var': str('Context variable holding the user name (context-var).'),
  'pass-context-var': str('Context variable holding the password (context-var).'),
  'ei-default-form': bool('Use the default login form (html-form; not supported).', true),
  'ei-custom-form': str('Location of a custom login form (html-form; not supported).'),
  'ei-custom-form-tls-client-profile': str('TLS profile to fetch the custom form (html-form; not supported).'),
  'ei-custom-form-content-security-policy': str('Content-Security-Policy of the custom form (not supported).'),
  'ei-form-time-limit': int('Seconds allowed to submit the form (html-form; not supported).', 300),
  'redirect-url': str('URL fragment to redirect to for credentials (redirect; not supported).'),
  'redirect-time-limit': int('Seconds allowed to complete the redirect (redirect; not supported).', 300),
  'user-auth-method': oneOfStrings(
    ['disabled', 'user-registry', 'auth-url', 'ldap'],
    'How the extracted credentials are authenticated: by a user registry the catalog enables.',
    'user-registry',
  ),
  'au-stop-on-error': bool('Stop with UnauthorizedError when the registry refuses the credentials.', true),
  'user-registry': str('Name of the user registry (authurl or LDAP) that authenticates (user-registry).'),
  'auth-url': str('Inline authentication URL (auth-url; not supported: create an authurl user registry).'),
  'auth-tls-client-profile': str('TLS profile for the inline authentication URL (not supported).'),
  'auth-response-headers-pattern': str('Response headers of the authentication URL to keep (not supported).'),
  'auth-response-header-credential': str('Response header naming the authenticated user (not supported).'),
  'user-az-method': oneOfStrings(
    ['disabled', 'authenticated', 'html-form'],
    'authenticated: every user an earlier step authenticated is authorized.',
    'authenticated',
  ),
  'az-stop-on-error': bool('Stop with ForbiddenError when the user is not authorized.', true),
  'az-default-form': bool('Use the default authorization form (html-form; not supported).', true),
  'az-custom-form': str('Location of a custom authorization form (html-form; not supported).'),
  'az-custom-form-tls-client-profile': str('TLS profile to fetch the custom form (not supported).'),
  'az-custom-form-content-security-policy': str('Content-Security-Policy of the custom form (not supported).'),
  'az-form-time-limit': int('Seconds allowed to submit the authorization form (not supported).', 300),
  'az-table-display-format': str('Scope table format of the authorization form (not supported).'),
  'az-table-dynamic-entries': str('Context variable with dynamic scope entries (not supported).'),
  'az-table-default-entry': str('Default scope entry of the authorization form (not supported).'),
};

const mapIo: JSONSchema = {
  type: 'object',
  description: 'Named map inputs or outputs.',
  default: {},
  additionalProperties: {
    type: 'object',
    additionalProperties: false,
    required: ['variable'],
    properties: {
      variable: str('Context variable read (input) or written (output), e.g. request.parameters.zip, message.body.'),
      schema: { type: 'object', description: 'Schema of the value, inline or {$ref: "#/definitions/x"}.', default: {} },
      $ref: str('JSON pointer to the schema of the value, e.g. #/definitions/x.'),
      type: str('Type of the value when no schema is given (v5).'),
      content: str('Content type: application/json or application/xml (XML is parsed/serialised).', 'application/json'),
    },
  },
};

const mapAction: JSONSchema = {
  type: 'object',
  additionalProperties: false,
  anyOf: [{ required: ['set'] }, { required: ['create'] }],
  properties: {
    set: str('Output field written, e.g. output.xyz.next_day.'),
    create: str('Output array element created (inside foreach).'),
    from: { type: ['string', 'array'], items: { type: 'string' }, description: 'Input field(s) read, e.g. xyz.rates.next_day.' },
    value: str('Expression computing the value from the inputs ($(var), JavaScript on v5, JSONata on API Gateway).'),
    default: { type: ['string', 'number', 'boolean', 'null'], description: 'Value written when the source is absent.' },
    foreach: str('Input array iterated; nested actions run per element.'),
    actions: { type: 'array', default: [], description: 'Nested actions run for each foreach element.', items: { $ref: '#/definitions/action' } },
  },
};

const mapOptions: JSONSchema = {
  type: 'object',
  description: 'Mapping options as API Connect writes them.',
  default: {},
  additionalProperties: false,
  properties: {
    includeEmptyXMLElements: bool('Write empty XML elements for absent values.', false),
    namespaceInheritance: bool('Child XML elements inherit the parent namespace.', true),
    inlineNamespaces: bool('Declare XML namespaces on each element.', false),
    mapResolveXMLInputDataType: bool('Type XML input values from the input schema.', false),
    mapResolveApicVariables: bool('Resolve $(var) in action values.', true),
    mapEmulateV4EmptyJSONObject: bool('Emit {} for empty objects as v4 did.', false),
    mapEmulateV4DefaultRequiredProps: bool('Fill required properties with defaults as v4 did.', false),
    mapEnablePostProcessingJSON: bool('Post-process the JSON output (drop empty values).', false),
    mapReferenceLimit: int('Maximum depth of recursive schema references.', 1, { minimum: 0 }),
    mapArrayFirstElementValue: bool('Use the first element when an array maps to a scalar.', true),
    mapCreateEmptyArray: oneOfStrings(['all', 'parent', 'none'], 'When to create empty output arrays.', 'all'),
    mapNullValue: bool('Write null for null input values instead of omitting them.', false),
    mapOptimizeSchemaDefinition: bool('Compile only the schema parts the actions use.', false),
    mapXmlEmptyElement: oneOfStrings(['string', 'null', 'none'], 'How an empty XML input element reads.', 'string'),
    mapEnableSchemaDefaults: bool('Apply schema default values to absent outputs.', false),
  },
};

const conditionCase: JSONSchema = {
  type: 'object',
  additionalProperties: false,
  anyOf: [{ required: ['condition', 'execute'] }, { required: ['otherwise'] }],
  properties: {
    condition: str('Condition (JSONata on API Gateway 2.x, JavaScript on v5 1.0.0); the first true case runs.'),
    execute: executeList,
    otherwise: { ...executeList, description: 'Policies run when no case matched.' },
  },
};

const operationReference: JSONSchema = {
  type: ['string', 'object'],
  description: 'An operationId, or {verb, path} of an operation.',
  additionalProperties: false,
  required: ['verb', 'path'],
  properties: {
    verb: str('HTTP method of the operation.'),
    path: str('Path template of the operation, e.g. /stores.'),
  },
};

const rateLimitReference: JSONSchema = {
  type: 'array',
  default: [],
  description: 'Limits applied by name.',
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['name'],
    properties: {
      name: str('Name of a limit defined by source (plan, catalog or gateway).'),
      operation: oneOfStrings(['consume', 'replenish', 'check'], 'What the step does with the limit.', 'consume'),
    },
  },
};

const countLimitReference: JSONSchema = {
  type: 'array',
  default: [],
  description: 'Count limits applied by name.',
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['name'],
    properties: {
      name: str('Name of a count limit defined by source.'),
      operation: oneOfStrings(['inc', 'dec'], 'Increment or decrement the count.', 'inc'),
    },
  },
};

const contentLevels = ['none', 'activity', 'header', 'payload'];

/** The assembly policy types Portico reads, with their accepted versions and JSON schemas. */
export const policySchemas: Record<string, PolicySchemaEntry> = {
  invoke: {
    versions: ['1.0.0', '2.0.0', '2.1.0', '2.2.0', '2.3.0'],
    description: 'Calls a backend URL and stores the response in output (default message).',
    schema: policy(['1.0.0', '2.0.0', '2.1.0', '2.2.0', '2.3.0'], invokeFields, ['target-url']),
  },
  proxy: {
    versions: ['1.0.0', '2.0.0'],
    description: 'Forwards the request to a backend URL and returns its response as the API response.',
    schema: policy(['1.0.0', '2.0.0'], invokeFields, ['target-url']),
  },
  map: {
    versions: ['1.0.0', '2.0.0', '2.1.0'],
    description: 'Builds outputs (e.g. message.body) from named inputs with set/from/value actions.',
    schema: policy(
      ['1.0.0', '2.0.0', '2.1.0'],
      {
        inputs: mapIo,
        outputs: mapIo,
        actions: { type: 'array', default: [], description: 'Mapping actions, in order.', items: { $ref: '#/definitions/action' } },
        options: mapOptions,
      },
      [],
      { definitions: { action: mapAction } },
    ),
  },
  gatewayscript: {
    versions: ['1.0.0', '2.0.0'],
    description: 'Runs a JavaScript (GatewayScript) source in a sandbox with the context API.',
    schema: policy(['1.0.0', '2.0.0'], { source: str('The script.') }, ['source']),
  },
  'operation-switch': {
    versions: ['1.0.0', '2.0.0'],
    description: 'Runs the case whose operations include the called operation; otherwise runs otherwise.',
    schema: policy(
      ['1.0.0', '2.0.0'],
      {
        case: {
          type: 'array',
          default: [],
          description: 'Cases, each naming operations by operationId or {verb, path}.',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['operations', 'execute'],
            properties: {
              operations: { type: 'array', description: 'Operations this case handles.', items: operationReference },
              execute: executeList,
            },
          },
        },
        otherwise: { ...executeList, description: 'Policies run when no case names the operation.' },
      },
      ['case'],
    ),
  },
  switch: {
    versions: ['1.0.0', '2.0.0'],
    description: 'Runs the first case whose condition holds, else the otherwise entry.',
    schema: policy(['1.0.0', '2.0.0'], { case: { type: 'array', default: [], description: 'Condition cases and one optional {otherwise} entry.', items: conditionCase } }, ['case']),
  },
  if: {
    versions: ['1.0.0', '2.0.0'],
    description: 'Runs execute when condition holds.',
    schema: policy(['1.0.0', '2.0.0'], { condition: str('Condition (JSONata on API Gateway, JavaScript on v5).'), execute: executeList }, ['condition', 'execute']),
  },
  'set-variable': {
    versions: ['1.0.0', '2.0.0'],
    description: 'Sets, adds (headers) or clears context variables.',
    schema: policy(
      ['1.0.0', '2.0.0'],
      {
        actions: {
          type: 'array',
          default: [],
          description: 'Variable actions, in order.',
          items: {
            type: 'object',
            additionalProperties: false,
            anyOf: [{ required: ['set'] }, { required: ['add'] }, { required: ['clear'] }],
            properties: {
              set: str('Variable to set, e.g. message.headers.x-trace.'),
              add: str('Header variable to which a value is added.'),
              clear: str('Variable to clear.'),
              value: { type: ['string', 'number', 'boolean', 'object', 'array', 'null'], description: 'Value; $(var) is substituted in strings.' },
              type: oneOfStrings(['string', 'number', 'boolean', 'object', 'any'], 'How value is typed before it is stored.', 'any'),
            },
          },
        },
      },
      ['actions'],
    ),
  },
  'jwt-validate': {
    versions: ['1.0.0', '2.0.0'],
    description: 'Verifies a JWT (signature, exp/nbf, iss and aud patterns) and writes its claims to output-claims.',
    schema: policy(
      ['1.0.0', '2.0.0'],
      {
        jwt: str('Variable holding the JWT (`Bearer <jwt>` in request.headers.authorization).', 'request.headers.authorization'),
        'output-claims': str('Variable the verified claims are written to.', 'decoded.claims'),
        'iss-claim': str('Regular expression the iss claim must match; empty = not checked.'),
        'aud-claim': str('Regular expression the aud claim (or one of its values) must match; empty = not checked.'),
        'jws-jwk': str('Variable holding the verification JWK or JWK set (api.properties.* is read once at publish).'),
        'jwks-url': str('Portico: a JWKS URL ($(property) allowed), fetched and kept (PORTICO_JWKS_* settings).'),
        'tls-profile': str('Portico: TLS profile (PORTICO_TLS_PROFILES) for an https jwks-url.'),
        'jws-algorithms': {
          type: 'array',
          default: [],
          description: 'Portico: algorithms accepted (default: every one the key type allows; none never).',
          items: { type: 'string' },
        },
        'jws-crypto': refused('DataPower crypto object: not supported by Portico (use jws-jwk or jwks-url).'),
        'jwe-crypto': refused('DataPower crypto object for JWE: not supported by Portico.'),
        'jwe-jwk': refused('JWK to decrypt a JWE: encrypted JWTs are not supported by Portico.'),
      },
      [],
      { anyOf: [{ required: ['jws-jwk'] }, { required: ['jwks-url'] }] },
    ),
  },
  'jwt-generate': {
    versions: ['1.0.0', '2.0.0'],
    description: 'Signs a JWT with claims taken from variables and stores it in jwt.',
    schema: policy(['1.0.0', '2.0.0'], {
      jwt: str('Variable the signed JWT is written to.', 'generated.jwt'),
      'jti-claim': bool('Add a random jti claim.', false),
      'iss-claim': str('Variable holding the iss claim.', 'iss.claim'),
      'sub-claim': str('Variable holding the sub claim.'),
      'aud-claim': str('Variable holding the aud claim (a string or a list).'),
      'exp-claim': { type: ['integer', 'string'], default: 3600, description: 'Lifetime in seconds (exp = iat + this).' },
      'private-claims': str('Variable holding a JSON object of further claims (registered claims are not overridden).'),
      'jws-jwk': str('Variable holding the private signing JWK (api.properties.* is read once at publish).'),
      'jws-alg': oneOfStrings(
        ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'HS256', 'HS384', 'HS512', 'EdDSA'],
        'Signing algorithm; default: the first the key type allows (RS256, ES256 by curve, HS256, EdDSA).',
      ),
      'jws-crypto': refused('DataPower crypto object: not supported by Portico (use jws-jwk).'),
      'jwe-crypto': refused('DataPower crypto object for JWE: not supported by Portico.'),
      'jwe-jwk': refused('JWK to encrypt the JWT: JWE is not supported by Portico.'),
      'jwe-enc-alg': refused('JWE content encryption: not supported by Portico.'),
      'jwe-alg': refused('JWE key management: not supported by Portico.'),
    }, ['jws-jwk']),
  },
  throw: {
    versions: ['1.0.0', '2.0.0', '2.1.0'],
    description: 'Raises a named error, handled by a matching catch or returned as 500.',
    schema: policy(
      ['1.0.0', '2.0.0', '2.1.0'],
      {
        name: str('Error name matched by catch blocks.'),
        message: str('Error message returned as moreInformation.', ''),
        'error-status-code': { type: ['string', 'integer'], default: '500', description: 'HTTP status returned for the error (2.1.0).' },
        'error-status-reason': str('HTTP reason phrase returned for the error (2.1.0).'),
      },
      ['name'],
    ),
  },
  parse: {
    versions: ['1.0.0', '2.0.0', '2.1.0', '2.2.0'],
    description: 'Parses a message body (JSON, XML, GraphQL) into a tree, with limits.',
    schema: policy(['1.0.0', '2.0.0', '2.1.0', '2.2.0'], {
      'parse-settings-reference': {
        type: 'object',
        description: 'Parse settings: by name (default), url or inline (literal, parse-settings).',
        default: { default: 'apic-default-parsesettings' },
        additionalProperties: false,
        properties: {
          default: str('Name of a parse settings object of the gateway.', 'apic-default-parsesettings'),
          url: str('URL of parse settings.'),
          literal: str('Parse settings as XML or JSON text.'),
          'parse-settings': { type: 'object', default: {}, description: 'Inline DataPower parse settings (document_type, limits).' },
        },
      },
      input: str('Message to parse.', 'message'),
      output: str('Message receiving the parsed tree; default the input.'),
      'use-content-type': bool('Choose the parser from the Content-Type header.', false),
      'warn-on-empty-input': bool('Log instead of failing on an empty body.', false),
    }),
  },
  validate: {
    versions: ['1.0.0', '2.0.0', '2.1.0', '2.2.0'],
    description: 'Validates a message body against a JSON schema; a failure raises ValidateError (422).',
    schema: policy(['1.0.0', '2.0.0', '2.1.0', '2.2.0'], {
      definition: str('Schema in this document: a JSON pointer (#/definitions/x), a definition name, or v5 request/response.'),
      schema: { type: 'object', default: {}, description: 'Inline JSON schema.' },
      'validate-against': oneOfStrings(['body-param', 'response-param', 'url', 'definition', 'wsdl', 'graphql'], 'What the body is checked against.', 'body-param'),
      url: str('URL of a schema (validate-against: url).'),
      input: str('Message validated.', 'message'),
      output: str('Message receiving the validated result.'),
      'compile-settings': { type: 'object', default: {}, description: 'Schema compile settings (DataPower).' },
    }),
  },
  'xml-to-json': {
    versions: ['1.0.0', '2.0.0'],
    description: 'Converts an XML message body to JSON.',
    schema: policy(['1.0.0', '2.0.0'], {
      input: str('Message converted.', 'message'),
      output: str('Message receiving the result; default the input.'),
      'conversion-type': oneOfStrings(['badgerFish', 'relaxedBadgerFish', 'apicv5'], 'Convention: badgerFish, relaxedBadgerFish or apicv5 (read as badgerFish).', 'badgerFish'),
      'compile-settings': { type: 'object', default: {}, description: 'Conversion compile settings (DataPower).' },
    }),
  },
  'json-to-xml': {
    versions: ['1.0.0', '2.0.0'],
    description: 'Converts a JSON message body to XML.',
    schema: policy(['1.0.0', '2.0.0'], {
      input: str('Message converted.', 'message'),
      output: str('Message receiving the result; default the input.'),
      'conversion-type': oneOfStrings(['badgerFish', 'relaxedBadgerFish', 'apicv5'], 'Convention: badgerFish, relaxedBadgerFish or apicv5 (read as badgerFish).', 'badgerFish'),
      'root-element-name': str('Root element wrapped around the result when needed.', 'json'),
      'always-output-root-element': bool('Always wrap the result in root-element-name.', false),
      'unnamed-element-name': str('Element name for array items without a name.', 'element'),
      'compile-settings': { type: 'object', default: {}, description: 'Conversion compile settings (DataPower).' },
    }),
  },
  ratelimit: {
    versions: ['1.0.0', '2.0.0', '2.1.0'],
    description: 'Applies named rate, burst or count limits inside the assembly (AssemblyRateLimitError, 429).',
    schema: policy(['1.0.0', '2.0.0', '2.1.0'], {
      source: oneOfStrings(['plan-default', 'plan-named', 'catalog-named', 'gateway-named'], 'Where the named limits are defined.', 'plan-default'),
      'rate-limit': rateLimitReference,
      'burst-limit': rateLimitReference,
      'count-limit': countLimitReference,
    }),
  },
  'user-security': {
    versions: ['2.0.0'],
    description:
      'Extracts a user\'s credentials, authenticates them against a user registry the catalog enables and ' +
      'authorizes the user (UnauthorizedError 401, ForbiddenError 403, 503 when the registry cannot answer).',
    schema: policy(['2.0.0'], userSecurityFields),
  },
  'activity-log': {
    versions: ['1.0.0'],
    description: 'v5 assembly form of the activity log settings: what analytics records per call.',
    schema: policy(['1.0.0'], {
      content: oneOfStrings(contentLevels, 'What is logged for a successful call.', 'activity'),
      'error-content': oneOfStrings(contentLevels, 'What is logged for a failed call.', 'payload'),
    }),
  },
  log: {
    versions: ['1.0.0', '2.0.0', '2.1.0'],
    description: 'Sets the analytics log level for this call or sends the gathered log.',
    schema: policy(['1.0.0', '2.0.0', '2.1.0'], {
      'log-level': oneOfStrings(['default', ...contentLevels], 'What is logged; default = the API activity-log setting.', 'default'),
      mode: oneOfStrings(['gather-only', 'send-only', 'gather-and-send'], 'Gather the log data, send it, or both.', 'gather-and-send'),
    }),
  },
};
