/**
 * The first phase of a WSDL import: the file set. A WSDL and the XSDs it imports come as
 * attachments, a folder or a zip (bounded: zip bombs, paths outside the zip); the main WSDL is
 * the shallowest .wsdl of the set.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, posix, relative, sep } from 'node:path';
import AdmZip from 'adm-zip';
import { DefinitionError } from '../errors.ts';
import type { WsdlFiles } from './wsdl-model.ts';

/** Zip limits: entries, bytes per entry and in total, uncompressed (zip bombs). */
const zipLimits = { entries: 500, entryBytes: 4 * 1024 * 1024, totalBytes: 32 * 1024 * 1024 };

/** Files from a string map (attachments, tests). */
export function filesFromMap(files: Record<string, string>): WsdlFiles {
  const normalised = new Map(
    Object.entries(files).map(([name, text]) => [posix.normalize(name.replace(/\\/g, '/')), text]),
  );
  return { read: (path) => normalised.get(posix.normalize(path)) };
}

/** Files of a folder (recursive, .wsdl/.xsd only); paths are relative to the folder. */
export function readWsdlFolder(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const visit = (path: string, depth: number): void => {
    if (depth > 8) return;
    for (const name of readdirSync(path)) {
      if (name.startsWith('.')) continue;
      const full = join(path, name);
      const stat = statSync(full);
      if (stat.isDirectory()) visit(full, depth + 1);
      else if (/\.(wsdl|xsd|xml)$/i.test(name) && stat.size <= zipLimits.entryBytes)
        out[relative(dir, full).split(sep).join('/')] = readFileSync(full, 'utf8');
    }
  };
  visit(dir, 0);
  return out;
}

/**
 * The .wsdl/.xsd files of a zip, bounded in count and size.
 * @throws DefinitionError when the zip cannot be read or is over the limits.
 */
export function readWsdlZip(bytes: Buffer, file: string): Record<string, string> {
  let zip: AdmZip;
  try {
    zip = new AdmZip(bytes);
  } catch (error) {
    throw new DefinitionError(file, [
      { path: '$', rule: 'zip', reason: `not a readable zip file: ${(error as Error).message}` },
    ]);
  }
  const entries = zip.getEntries().filter((entry) => !entry.isDirectory);
  if (entries.length > zipLimits.entries)
    throw new DefinitionError(file, [{ path: '$', rule: 'zip-limit', reason: `more than ${zipLimits.entries} files` }]);
  const out: Record<string, string> = {};
  let total = 0;
  for (const entry of entries) {
    if (!/\.(wsdl|xsd|xml)$/i.test(entry.entryName)) continue;
    const name = posix.normalize(entry.entryName.replace(/\\/g, '/'));
    if (name.startsWith('../') || posix.isAbsolute(name))
      throw new DefinitionError(file, [
        { path: entry.entryName, rule: 'zip-path', reason: 'an entry points outside the zip' },
      ]);
    if (entry.header.size > zipLimits.entryBytes)
      throw new DefinitionError(file, [
        {
          path: entry.entryName,
          rule: 'zip-limit',
          reason: `larger than ${zipLimits.entryBytes} bytes uncompressed`,
        },
      ]);
    total += entry.header.size;
    if (total > zipLimits.totalBytes)
      throw new DefinitionError(file, [
        {
          path: entry.entryName,
          rule: 'zip-limit',
          reason: `the files add up to more than ${zipLimits.totalBytes} bytes uncompressed`,
        },
      ]);
    const data = entry.getData();
    if (data.length > zipLimits.entryBytes)
      throw new DefinitionError(file, [
        {
          path: entry.entryName,
          rule: 'zip-limit',
          reason: `larger than ${zipLimits.entryBytes} bytes uncompressed`,
        },
      ]);
    out[name] = data.toString('utf8');
  }
  return out;
}

/** The one .wsdl file of a file set (the shallowest when several), for zips and folders. */
export function mainWsdlOf(files: Record<string, string>, file: string): string {
  const wsdls = Object.keys(files)
    .filter((name) => /\.wsdl$/i.test(name))
    .sort((a, b) => a.split('/').length - b.split('/').length || a.localeCompare(b));
  if (wsdls.length === 0)
    throw new DefinitionError(file, [{ path: '$', rule: 'no-wsdl', reason: 'no .wsdl file found' }]);
  return wsdls[0];
}
