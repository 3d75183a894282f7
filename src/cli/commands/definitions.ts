/**
 * `portico import`, `publish` and `apply`: API and product documents (and WSDLs) sent to the
 * management server, with the files beside them that they refer to.
 */
import { readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Command } from 'commander';
import { PorticoError } from '../../errors.ts';
import { callManagement as api, printLine as out } from '../client.ts';

/** A file's text; a missing or unreadable file is a CLI_FILE error naming it. */
export function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new PorticoError('CLI_FILE', {
      file,
      reason: (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message,
    });
  }
}

/** Files beside `file` that a document may refer to (WSDL, XSD, API files for `$ref`s). */
async function siblings(file: string): Promise<Record<string, string>> {
  const { readDefinitionFolder } = await import('../../management/folder.ts');
  try {
    const folder = readDefinitionFolder(dirname(file));
    const all: Record<string, string> = {};
    for (const doc of [...folder.apis, ...folder.products]) all[basename(doc.file)] = doc.text;
    for (const name of folder.others) all[name] = readFileSync(join(dirname(file), name), 'utf8');
    delete all[basename(file)];
    return all;
  } catch {
    return {};
  }
}

/** What `import` sends: an API document, or a WSDL (alone or from a zip) with its sibling files as attachments. */
async function importSource(
  file: string,
): Promise<{ text: string; file: string; attachments: Record<string, string> }> {
  const { mainWsdlOf, readWsdlFolder, readWsdlZip } = await import('../../soap/wsdl-files.ts');
  if (/\.zip$/i.test(file)) {
    let bytes: Buffer;
    try {
      bytes = readFileSync(file);
    } catch (error) {
      throw new PorticoError('CLI_FILE', { file, reason: (error as Error).message });
    }
    const files = readWsdlZip(bytes, file);
    const main = mainWsdlOf(files, file);
    const { [main]: text, ...attachments } = files;
    return { text, file: main, attachments };
  }
  const text = readText(file);
  const { detectDocumentKind } = await import('../../definitions/index.ts');
  const kind = detectDocumentKind(text, file);
  if (kind === 'product')
    throw new PorticoError('CLI_FILE', {
      file,
      reason: 'is a product document; import takes an API document or a WSDL',
    });
  return {
    text,
    file: basename(file),
    attachments: kind === 'wsdl' ? readWsdlFolder(dirname(file)) : await siblings(file),
  };
}

/** What the server answers to an import or a product upsert. */
interface Applied {
  name: string;
  version: string;
  state: string;
  created: boolean;
  changed: boolean;
  /** The product's APIs its publish brought online. */
  activated?: string[];
}

const verdict = (result: Applied) => (result.created ? 'created' : result.changed ? 'changed' : 'unchanged');
const broughtOnline = (result: Applied) =>
  result.activated?.length ? `; brought online: ${result.activated.join(', ')}` : '';

function putApi(body: {
  document: string;
  file: string;
  attachments: Record<string, string>;
  replace: boolean;
  state?: string;
}): Promise<Applied> {
  return api('POST', '/api/apis', body) as Promise<Applied>;
}

interface ProductBody {
  document: string;
  file: string;
  attachments: Record<string, string>;
  state: string;
  activate?: boolean;
}

function putProduct(catalog: string, body: ProductBody): Promise<Applied> {
  return api('POST', `/api/catalogs/${encodeURIComponent(catalog)}/products`, body) as Promise<Applied>;
}

/** Registers `import`, `publish` and `apply`. */
export function registerDefinitionCommands(program: Command): void {
  program
    .command('import <file>')
    .description(
      'import an API definition (YAML or JSON), or a WSDL (.wsdl, or a .zip with its XSDs) as a REST API; it is created offline',
    )
    .option('--replace', 'replace an API with the same name and version')
    .option('--target-of <api>', 'add the WSDL service to an existing API (name:version) as a targets entry instead')
    .action(async (file: string, options: { replace?: boolean; targetOf?: string }) => {
      const source = await importSource(file);
      if (options.targetOf !== undefined) {
        const [name, version] = options.targetOf.split(':');
        if (!name || !version)
          throw new PorticoError('CONFIG_INVALID', { setting: '--target-of', reason: 'expected name:version' });
        if (!source.text.trimStart().startsWith('<'))
          throw new PorticoError('CLI_FILE', { file, reason: '--target-of takes a WSDL (.wsdl or .zip)' });
        const added = (await api(
          'POST',
          `/api/apis/${encodeURIComponent(name)}/${encodeURIComponent(version)}/targets`,
          {
            document: source.text,
            file: source.file,
            attachments: source.attachments,
          },
        )) as { target: string };
        out(`added target ${added.target} to api ${name}:${version}`);
        return;
      }
      const result = await putApi({
        document: source.text,
        file: source.file,
        attachments: source.attachments,
        replace: options.replace === true,
      });
      out(`${verdict(result)} api ${result.name}:${result.version} (${result.state})`);
    });

  program
    .command('publish <product>')
    .description(
      'create or update a product from its YAML and publish it to a catalog, bringing its offline APIs online',
    )
    .option('--catalog <name>', 'catalog', 'sandbox')
    .option('--stage', 'stage instead of publishing')
    .option('--no-activate', 'refuse to publish when an API of the product is offline, instead of bringing it online')
    .action(async (file: string, options: { catalog: string; stage?: boolean; activate: boolean }) => {
      const state = options.stage ? 'staged' : 'published';
      const document = { document: readText(file), file: basename(file), attachments: await siblings(file) };
      const result = await putProduct(options.catalog, { ...document, state, activate: options.activate });
      const said = `${verdict(result)} product ${result.name}:${result.version} (${result.state}) in ${options.catalog}`;
      out(`${said}${broughtOnline(result)}`);
    });

  program
    .command('apply <dir>')
    .description('make the catalog match a folder of API and product files (idempotent)')
    .option('--catalog <name>', 'catalog', 'sandbox')
    .option('--activate', 'bring the folder’s APIs online')
    .option('--stage', 'stage products instead of publishing them')
    .action(async (dir: string, options: { catalog: string; activate?: boolean; stage?: boolean }) => {
      const { readDefinitionFolder } = await import('../../management/folder.ts');
      const folder = readDefinitionFolder(dir);
      for (const doc of folder.apis) {
        const result = await putApi({
          document: doc.text,
          file: basename(doc.file),
          attachments: doc.attachments,
          replace: true,
          state: options.activate ? 'online' : undefined,
        });
        out(`${verdict(result)}  api ${result.name}:${result.version} (${result.state})`);
      }
      for (const doc of folder.products) {
        const result = await putProduct(options.catalog, {
          document: doc.text,
          file: basename(doc.file),
          attachments: doc.attachments,
          state: options.stage ? 'staged' : 'published',
        });
        out(`${verdict(result)}  product ${result.name}:${result.version} (${result.state})${broughtOnline(result)}`);
      }
    });
}
