/** The query's side of the engine, known without loading it: the table queries read, and what an empty query is. */

/** The view of the index that queries read. */
export const INDEX_TABLE = 'records';

/**
 * Whether `sql` is only blanks, comments and semicolons; the engine answers such a text with
 * "Error in native callback". Anything else is a statement, or the engine's to refuse.
 */
export function holdsNoStatement(sql: string): boolean {
  return sql.replace(/--[^\n]*|\/\*[\s\S]*?\*\//g, '').replace(/[\s;]/g, '') === '';
}

export const NO_STATEMENT = `query failed: no statement to run: give one, e.g. "SELECT status, count(*) FROM ${INDEX_TABLE} GROUP BY 1"`;
