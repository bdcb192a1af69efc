// Turns the runs the SDK sent (runs-sent.jsonl) into what LangSmith returns for them:
// posts and patches merged by id, then the fields the server adds (status, token counts,
// times as ISO text), as `Client.listRuns()` yields them; and a bulk-export Parquet file.
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
const out = process.argv[2];
const runs = new Map();
for (const line of readFileSync('runs-sent.jsonl', 'utf8').split('\n').filter(Boolean)) {
  const { body } = JSON.parse(line);
  for (const run of body.post ?? []) runs.set(run.id, { ...run });
  for (const patch of body.patch ?? []) runs.set(patch.id, { ...runs.get(patch.id), ...Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) });
}
const iso = (t) => (typeof t === 'number' ? new Date(t).toISOString().replace('Z', '000') : t?.replace(/Z$/, ''));
const listed = [...runs.values()].map((run) => {
  const usage = run.outputs?.generations?.[0]?.[0]?.message?.kwargs?.usage_metadata ?? run.extra?.metadata?.usage_metadata ?? run.outputs?.generations?.[0]?.[0]?.message?.kwargs?.response_metadata?.usage;
  const prompt = usage?.input_tokens ?? usage?.prompt_tokens ?? 0;
  const completion = usage?.output_tokens ?? usage?.completion_tokens ?? 0;
  const { child_runs, session_name, serialized, ...rest } = run;
  return {
    ...rest,
    start_time: iso(run.start_time),
    end_time: iso(run.end_time),
    status: run.error ? 'error' : 'success',
    session_id: '5f2b7c1e-0d7a-4f0e-9a3c-3b1e6c2d9a10',
    parent_run_ids: run.parent_run_id ? [run.trace_id === run.parent_run_id ? run.trace_id : run.trace_id, run.parent_run_id].filter((v, i, a) => a.indexOf(v) === i) : [],
    prompt_tokens: run.run_type === 'llm' ? prompt : 0,
    completion_tokens: run.run_type === 'llm' ? completion : 0,
    total_tokens: run.run_type === 'llm' ? prompt + completion : 0,
  };
});
mkdirSync(`${out}`, { recursive: true });
writeFileSync(`${out}/runs.jsonl`, listed.map((r) => JSON.stringify(r)).join('\n') + '\n');
// Bulk export: the same fields, `inputs`, `outputs`, `extra`, `events` as JSON text columns.
const rows = listed.map((r) => ({
  id: r.id, tenant_id: '8a4e1b2c-6f3d-4e5a-9b7c-1d2e3f4a5b6c', session_id: r.session_id, name: r.name, run_type: r.run_type,
  start_time: r.start_time, end_time: r.end_time ?? null, status: r.status, error: r.error ?? null,
  inputs: JSON.stringify(r.inputs ?? {}), outputs: r.outputs == null ? null : JSON.stringify(r.outputs), extra: JSON.stringify(r.extra ?? {}),
  events: JSON.stringify(r.events ?? []), tags: r.tags ?? [], trace_id: r.trace_id, dotted_order: r.dotted_order, parent_run_id: r.parent_run_id ?? null,
  prompt_tokens: r.prompt_tokens, completion_tokens: r.completion_tokens, total_tokens: r.total_tokens, first_token_time: null,
  prompt_cost: null, completion_cost: null, total_cost: null, reference_example_id: null,
}));
writeFileSync('bulk-rows.jsonl', rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
const duck = createRequire(process.env.DUCKDB_FROM)('@duckdb/node-api');
const instance = await duck.DuckDBInstance.create(':memory:');
const c = await instance.connect();
const dir = `${out}/bulk-export/export_id=3c1d5e7f-2a4b-4c6d-8e0f-1a2b3c4d5e6f/tenant_id=8a4e1b2c-6f3d-4e5a-9b7c-1d2e3f4a5b6c/session_id=5f2b7c1e-0d7a-4f0e-9a3c-3b1e6c2d9a10/runs/year=2026/month=12/day=06`;
mkdirSync(dir, { recursive: true });
await c.run(`COPY (SELECT id::UUID AS id, tenant_id::UUID AS tenant_id, session_id::UUID AS session_id, name, run_type, start_time::TIMESTAMP AS start_time, end_time::TIMESTAMP AS end_time, status, error, inputs, outputs, extra, events, tags, trace_id::UUID AS trace_id, dotted_order, parent_run_id::UUID AS parent_run_id, prompt_tokens::BIGINT AS prompt_tokens, completion_tokens::BIGINT AS completion_tokens, total_tokens::BIGINT AS total_tokens, first_token_time::TIMESTAMP AS first_token_time, prompt_cost::DECIMAL(18,9) AS prompt_cost, completion_cost::DECIMAL(18,9) AS completion_cost, total_cost::DECIMAL(18,9) AS total_cost, reference_example_id::UUID AS reference_example_id FROM read_json('bulk-rows.jsonl', format='newline_delimited', columns={id:'VARCHAR', tenant_id:'VARCHAR', session_id:'VARCHAR', name:'VARCHAR', run_type:'VARCHAR', start_time:'VARCHAR', end_time:'VARCHAR', status:'VARCHAR', error:'VARCHAR', inputs:'VARCHAR', outputs:'VARCHAR', extra:'VARCHAR', events:'VARCHAR', tags:'VARCHAR[]', trace_id:'VARCHAR', dotted_order:'VARCHAR', parent_run_id:'VARCHAR', prompt_tokens:'BIGINT', completion_tokens:'BIGINT', total_tokens:'BIGINT', first_token_time:'VARCHAR', prompt_cost:'VARCHAR', completion_cost:'VARCHAR', total_cost:'VARCHAR', reference_example_id:'VARCHAR'})) TO '${dir}/00000_0.parquet' (FORMAT parquet)`);
console.log('runs', listed.length, listed.map((r) => r.run_type).join(','));
