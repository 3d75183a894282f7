/**
 * Definitions: read and fully validate API Connect API documents (Swagger 2.0 / OpenAPI 3.x
 * with `x-ibm-configuration`) and product documents, into the shapes of `types.ts`.
 */
export { parseApiDocument, securityProblems } from './parse-api-document.ts';
export type { AssemblyCheck } from './parse-api-document.ts';
export { parseProductDocument } from './parse-product-document.ts';
export { parseRateLimit } from './parse-rate-limit.ts';
export type { ParsedRateLimit } from './parse-rate-limit.ts';
export { detectDocumentKind } from './detect-document-kind.ts';
export type { DocumentKind } from './detect-document-kind.ts';
export type * from './types.ts';
