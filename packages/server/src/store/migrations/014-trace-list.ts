/**
 * The trace list's filters by user and by session read the tenant's traces of that user or session in time order
 * (a user's page, a session's conversation), not every trace of the tenant; traces without one are left out of
 * these indexes, so most gateway writes do not touch them.
 */
export const traceListSchema = `
create index traces_by_user on traces (tenant_id, user_id, started_at desc, id desc) where user_id is not null;
create index traces_by_session on traces (tenant_id, session_id, started_at, id) where session_id is not null;
`;
