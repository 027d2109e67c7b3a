/**
 * Dead letters of the detection queue: a trace that keeps breaking the detection worker (its judging fails on its
 * own, or its worker stops while judging it) is moved aside, keeping its queue row with the last error, and is not
 * claimed again.
 */
export const detectionDeadLettersSchema = `
alter table detection_queue add column dead_lettered_at timestamptz;
`;
