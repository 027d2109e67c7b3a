/**
 * A trace is queued for detection again when a later write merges data into it that can change its verdict: its env,
 * status, input, output or metadata (the SDK's copy of a gateway trace adding `metadata.solution`, say). The insert
 * triggers see only rows inserted; a merge is an update, so without this a trace judged before its reference
 * arrived would stay `unknown` for good. The re-judged verdict replaces the old one (its revision goes up).
 */
export const rejudgeMergedTracesSchema = `
create function enqueue_merged_traces() returns trigger language plpgsql as $$
begin
  insert into detection_queue (tenant_id, trace_id, reason)
  select n.tenant_id, n.id, 'rejudge'
  from new_rows n join old_rows o on o.tenant_id = n.tenant_id and o.id = n.id
  where (o.env, o.status, o.input, o.output, o.metadata) is distinct from (n.env, n.status, n.input, n.output, n.metadata)
  on conflict (tenant_id, trace_id) do update
    set enqueued_at = now(), seq = nextval('detection_queue_seq'), reason = excluded.reason;
  return null;
end $$;
create trigger traces_enqueue_merged after update on traces
  referencing old table as old_rows new table as new_rows for each statement execute function enqueue_merged_traces();
`;
