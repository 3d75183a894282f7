/**
 * The map policy's schema (IBM "map"): inputs, outputs, actions and options as API Connect writes them.
 */
import type { JSONSchema } from '../../definitions/json-schema.ts';
import { bool, int, oneOfStrings, str } from '../schema-kit.ts';

export const mapIo: JSONSchema = {
  type: 'object',
  description: 'Named map inputs or outputs.',
  default: {},
  additionalProperties: {
    type: 'object',
    additionalProperties: false,
    required: ['variable'],
    properties: {
      variable: str('Context variable read (input) or written (output), e.g. request.parameters.zip, message.body.'),
      // No default: a port has a schema, a $ref or a v5 type, and which one it has decides how it converts.
      schema: { type: 'object', description: 'Schema of the value, inline or {$ref: "#/definitions/x"}.' },
      $ref: str('JSON pointer to the schema of the value, e.g. #/definitions/x.'),
      type: str('Type of the value when no schema is given (v5).'),
      content: str('Content type: application/json or application/xml (XML is parsed/serialised).', 'application/json'),
    },
  },
};

export const mapAction: JSONSchema = {
  type: 'object',
  additionalProperties: false,
  anyOf: [{ required: ['set'] }, { required: ['create'] }],
  properties: {
    set: str('Output field written, e.g. output.xyz.next_day.'),
    create: str('Output array element created (inside foreach).'),
    from: {
      type: ['string', 'array'],
      items: { type: 'string' },
      description: 'Input field(s) read, e.g. xyz.rates.next_day.',
    },
    value: str('Expression computing the value from the inputs ($(var), JavaScript on v5, JSONata on API Gateway).'),
    default: {
      type: ['string', 'number', 'boolean', 'null'],
      description: 'Value written when the source is absent.',
    },
    foreach: str('Input array iterated; nested actions run per element.'),
    // No default: nested actions exist only with a foreach.
    actions: {
      type: 'array',
      description: 'Nested actions run for each foreach element.',
      items: { $ref: '#/definitions/action' },
    },
  },
};

export const mapOptions: JSONSchema = {
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
