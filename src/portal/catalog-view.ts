/** How the portal words a product (what a visitor may see of the catalog is decided by src/services/consumer/catalog.ts). */
import type { ProductRow } from '../store/schema.ts';

/** The product document's `info` texts. */
export function productInfo(product: ProductRow): { summary: string; description: string } {
  const document = JSON.parse(product.document) as { info?: { summary?: unknown; description?: unknown } };
  const text = (v: unknown) => (typeof v === 'string' ? v : '');
  return { summary: text(document.info?.summary), description: text(document.info?.description) };
}
