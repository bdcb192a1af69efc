#!/usr/bin/env node
// Baseline for `traces export --format openai`, `dedupe --status ok` and `stats`: the embedded
// engine a data engineer would reach for (@duckdb/node-api, the dependency `index` and `sql`
// already load), doing only the bare job: read every line of the trace files as an object
// (read_ndjson_objects, damaged lines skipped), keep the ok records, keep the first of each
// (inputs_hash, config_hash) by a row_number() window, project the messages, COPY them out.
// Two threads, as many as traces uses on this machine.
//
//   node bench/baselines/duckdb-export.mjs TREE OUT [THREADS]
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { traceFiles } from './trace-files.mjs';

const quote = (s) => `'${s.replaceAll("'", "''")}'`;
const [root, outDir, threads = '2'] = process.argv.slice(2);
mkdirSync(outDir, { recursive: true });
const files = traceFiles(root);
const instance = await DuckDBInstance.create(':memory:', { threads });
const connection = await instance.connect();
// The window needs the whole input before it emits: DuckDB spills past its memory limit (80% of RAM by default).
const sql = `
COPY (
  SELECT json_extract(json, '$.messages') AS messages
  FROM (
    SELECT json,
           row_number() OVER (PARTITION BY json_extract_string(json, '$.inputs_hash'), json_extract_string(json, '$.config_hash')) AS n
    FROM read_ndjson_objects([${files.map(quote).join(', ')}], ignore_errors = true)
    WHERE json_exists(json, '$.synalinks_version')
      AND NOT json_exists(json, '$.exception')
      AND json_exists(json, '$.outputs') AND json_type(json, '$.outputs') <> 'NULL'
  )
  WHERE n = 1
) TO ${quote(path.join(outDir, 'training.jsonl'))} (FORMAT JSON)`;
const result = await connection.runAndReadAll(sql);
const written = Number(result.getRows()[0]?.[0] ?? 0);
process.stdout.write(JSON.stringify({ written, files: files.length }) + '\n');
