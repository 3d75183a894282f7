/**
 * Reads a folder of definitions for `portico apply` and the demo: API documents, product
 * documents, and the files they refer to (WSDL/XSD beside an API, API files a product names
 * by `$ref`). Nothing is stored here; the caller imports APIs first, then products.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { detectDocumentKind } from '../definitions/index.ts';
import { PorticoError } from '../errors.ts';

export interface FolderDocument {
  file: string;
  text: string;
  /** Other files of the folder this document may refer to, by name. */
  attachments: Record<string, string>;
}

export interface FolderPlan {
  apis: FolderDocument[];
  products: FolderDocument[];
  /** WSDL and XSD files, attached to every API. */
  others: string[];
}

const documentExtensions = /\.(ya?ml|json)$/i;
const attachmentExtensions = /\.(wsdl|xsd|ya?ml|json)$/i;

/** Reads `dir` (not recursive); a file that is not a definition is a clear error. */
export function readDefinitionFolder(dir: string): FolderPlan {
  let names: string[];
  try {
    if (!statSync(dir).isDirectory()) throw new Error('not a folder');
    names = readdirSync(dir)
      .filter((name) => !name.startsWith('.'))
      .sort();
  } catch (error) {
    throw new PorticoError('CLI_FILE', { file: dir, reason: (error as Error).message });
  }
  const texts = new Map<string, string>();
  for (const name of names) {
    const path = join(dir, name);
    if (!statSync(path).isFile() || !attachmentExtensions.test(name)) continue;
    texts.set(name, readFileSync(path, 'utf8'));
  }
  const apis: FolderDocument[] = [];
  const products: FolderDocument[] = [];
  const others: string[] = [];
  const xmlFiles = Object.fromEntries([...texts].filter(([name]) => /\.(wsdl|xsd)$/i.test(name)));
  const definitionFiles = Object.fromEntries([...texts].filter(([name]) => documentExtensions.test(name)));
  for (const [name, text] of texts) {
    const file = join(dir, name);
    if (!documentExtensions.test(name)) {
      others.push(name);
      continue;
    }
    const kind = detectDocumentKind(text, file);
    if (kind === 'product') products.push({ file, text, attachments: definitionFiles });
    else if (kind === 'api') apis.push({ file, text, attachments: xmlFiles });
  }
  return { apis, products, others };
}
