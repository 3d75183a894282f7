/** The zipcodes package (CommonJS, no type declarations) with the slice the tests read. */
import { createRequire } from 'node:module';

interface ZipInfo {
  zip: string;
  latitude: number;
  longitude: number;
  city: string;
  state: string;
}

const zipcodes = createRequire(import.meta.url)('zipcodes') as { lookup(zip: string): ZipInfo | undefined };
export default zipcodes;
