/**
 * A trace is queued for detection again when a later copy of one of its steps fills in what the stored step lacked
 * (the SDK's copy of a step the gateway recorded, bringing the error the caller saw, say): the step merge is an
 * update, which the insert triggers do not see. The re-judged verdict replaces the old one (its revision goes up).
 */
export const rejudgeMergedStepsSchema = `
create function enqueue_merged_steps() returns trigger language plpgsql as $$
begin
  insert into detection_queue (tenant_id, trace_id, reason)
  select distinct n.tenant_id, n.trace_id, 'rejudge'
  from new_rows n join old_rows o on o.tenant_id = n.tenant_id and o.trace_id = n.trace_id and o.id = n.id
  where o is distinct from n
  on conflict (tenant_id, trace_id) do update
    set enqueued_at = now(), seq = nextval('detection_queue_seq'), reason = excluded.reason;
  return null;
end $$;
create trigger steps_enqueue_merged after update on steps
  referencing old table as old_rows new table as new_rows for each statement execute function enqueue_merged_steps();
`;
