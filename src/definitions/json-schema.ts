/** A JSON Schema (draft-07 subset that ajv understands), as the definition and policy schemas are written. */
export type JSONSchema = Record<string, unknown>;
