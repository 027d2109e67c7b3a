/**
 * A trace is queued for detection once per transaction: a batch's trace rows queue it, and its step rows (in the
 * same statement) find that queue row and leave it as it is, where writing it again would cost about a third of
 * storing a gateway trace on the embedded database. A trace queued in an earlier transaction is queued anew by its
 * later steps and feedback.
 */
export const enqueueOncePerTransactionSchema = `
create or replace function enqueue_detection() returns trigger language plpgsql as $$
begin
  if tg_table_name = 'traces' then
    insert into detection_queue (tenant_id, trace_id, reason)
    select tenant_id, id, 'ingest' from (select distinct tenant_id, id from new_rows) x
    on conflict (tenant_id, trace_id) do update
      set enqueued_at = now(), seq = nextval('detection_queue_seq'), reason = excluded.reason
      where detection_queue.enqueued_at <> now();
  else
    insert into detection_queue (tenant_id, trace_id, reason)
    select tenant_id, trace_id, tg_argv[0] from (select distinct tenant_id, trace_id from new_rows) x
    where not exists (select 1 from detection_queue q
                      where q.tenant_id = x.tenant_id and q.trace_id = x.trace_id and q.enqueued_at = now())
    on conflict (tenant_id, trace_id) do update
      set enqueued_at = now(), seq = nextval('detection_queue_seq'), reason = excluded.reason
      where detection_queue.enqueued_at <> now();
  end if;
  return null;
end $$;
`;
