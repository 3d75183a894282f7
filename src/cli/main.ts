/**
 * The `portico` command. `serve` and `demo` run the platform; every other command talks to a
 * management server over its REST API (like `apic` and decK), so the same CLI drives a laptop
 * or a cluster. Errors go to stderr, one line each; the exit code is 0 or 1.
 *
 * A command loads what it uses when it runs (the definition parsers, the WSDL reader, the store),
 * so a gateway cluster's primary and its workers, which run this file too, hold none of it.
 */
import { fail } from './fail.ts';
import { porticoProgram } from './program.ts';

porticoProgram().parseAsync(process.argv).catch(fail);
