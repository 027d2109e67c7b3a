/**
 * Failures by the time their trace started, so the failures of a time window (analytics' before/after a promotion,
 * a pattern's last weeks) are read by a range scan of the tenant's index, not by scanning all its failures.
 */
export const failuresByTimeSchema = `
create index failures_by_time on failures (tenant_id, started_at);
`;
